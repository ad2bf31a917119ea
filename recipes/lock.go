package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// Locker is what the fair Lock, HerdLock and HerdChildrenLock share; the
// load generator drives all three through it.
type Locker interface {
	// Lock blocks until the lock is held or ctx ends. A Lock on a value that
	// already holds the lock only increments its hold count.
	Lock(ctx context.Context) error
	// TryLock takes the lock if nobody holds it, and otherwise returns
	// ErrHeldByOther at once, without waiting.
	TryLock(ctx context.Context) error
	// Unlock decrements the hold count and releases the lock at zero.
	Unlock(ctx context.Context) error
	// Lost is closed when the current grant ends: lost or released.
	Lost() <-chan struct{}
	// FencingToken identifies the current grant; it increases strictly
	// from one holder of the lock to the next.
	FencingToken() uint64
	// Node is the path of the node held, "" when not held.
	Node() string
}

var (
	_ Locker = (*Lock)(nil)
	_ Locker = (*HerdLock)(nil)
	_ Locker = (*HerdChildrenLock)(nil)
)

// Lock is the fair ZooKeeper lock (ZooKeeper's lock recipe, in Curator's
// InterProcessMutex layout): each contender creates a protected
// EPHEMERAL_SEQUENTIAL child "_c_<uuid>-lock-<seq>" under the lock's path
// and watches only the child just before its own, so a release wakes
// exactly one waiter and grants follow creation order.
//
// A Lock value is one owner. Lock on a value that holds the lock counts
// (re-entrancy is per value, since Go has no thread identity); Unlock
// releases when the count returns to zero. Safe for concurrent use, and a
// Java process using Curator's InterProcessMutex on the same path excludes
// it and is excluded by it.
type Lock struct {
	core lockCore
	// Guarded by core.sem; see Lock.acquire.
	hint    listingHint
	granted string // the node of the last grant, which names the next
}

// NewLock returns a fair lock on path (an absolute znode path, used as the
// lock's directory; created on first use). It does not talk to ZooKeeper.
func NewLock(s *Session, path string, opts ...LockOption) *Lock {
	l := &Lock{}
	l.core.init(s, path, opts)
	l.core.acquire = l.acquire
	l.core.markRelease = true
	return l
}

// Lock blocks until the lock is held or ctx ends. When ctx ends first, the
// node it created is deleted before Lock returns (or, if the connection is
// down, as soon as it is back or the session ends).
func (l *Lock) Lock(ctx context.Context) error { return l.core.lock(ctx, false) }

// TryLock takes the lock if no other owner holds or waits for it, and
// otherwise deletes its node and returns ErrHeldByOther without waiting.
func (l *Lock) TryLock(ctx context.Context) error { return l.core.lock(ctx, true) }

// Unlock decrements the hold count; at zero it deletes the node, retrying
// across connection losses, and reports the lock released only once the
// server confirms the node is gone. The first attempt is made even when
// ctx has already ended (a deferred Unlock); if ctx ends before the delete
// is confirmed, the lock is still held (the error says so) and Unlock may
// be called again. If the grant had been lost, the lock is released all the
// same and the error wraps ErrLost. ErrNotHeld when not held.
func (l *Lock) Unlock(ctx context.Context) error { return l.core.unlock(ctx) }

// Lost returns a channel closed when the current grant ends: when ownership
// can no longer be trusted (the session expired or was closed, the node was
// deleted by someone else, or the connection was down longer than the
// WithLostAfterSuspended policy allows), or when Unlock released it. When
// not held it returns a closed channel. See Err for the reason. Watching
// starts 10 ms into a grant (shorter holds need none); a loss within that
// time is reported then.
func (l *Lock) Lost() <-chan struct{} { return l.core.lostCh() }

// Err says why the last grant ended: nil while held or after a clean
// Unlock, and an error wrapping ErrLost once ownership was lost.
func (l *Lock) Err() error { return l.core.err() }

// FencingToken identifies the current grant (0 when not held): one more
// than the sequence number of the node held. Grants follow sequence order, so
// successive holders get strictly increasing tokens, and a resource that
// remembers the highest token seen can reject a holder that lost the lock
// without knowing. Tokens compare within one lock path, as long as its
// directory is not deleted and created anew (sequences restart then).
func (l *Lock) FencingToken() uint64 { return l.core.token() }

// Node is the full path of the node held, "" when not held.
func (l *Lock) Node() string { return l.core.node() }

// Path is the lock's directory.
func (l *Lock) Path() string { return l.core.path }

// acquire is the fair lock's algorithm (recipes.md): protected create,
// list, and wait on the predecessor only.
//
// Two refinements take requests off the path. First, the hand-off: a
// holder's Unlock writes its node's data in the transaction that deletes
// it (releasedMark), so its successor's watch fires with NodeDataChanged
// instead of NodeDeleted. A holder's node was the lowest when granted, and
// no lower one can appear later; so, since nothing lies between our
// predecessor and us, that event alone grants us the lock, without the
// listing the recipe otherwise makes on every wake-up (Curator's and
// go-zookeeper's locks make it). Only a zkherd Lock's own release can
// cause the event: its nodes are created with ownerACL, so the server
// refuses anyone else's write, and their names carry a version 5 UUID to
// say so. Any other wake-up (an abandoned waiter, an expired session, a
// Curator holder) is followed by a listing as usual.
//
// Second, the listing that usually follows the create: a node we can name
// whose sequence is ours minus one is our predecessor if it exists (no
// sequence lies between), and the watch request that follows proves it
// exists; if it does not, we list as usual. Two names are known. The
// listing that granted this value the lock last time ended with tail, the
// last node queued then. And the node created since by the holder before
// us, whose release woke us, is predictable when that holder is a zkherd
// Lock: after a grant, a Lock names its next node with a UUID derived from
// the name of the node it was granted with (guidAfter), which is the node
// we watched. In a busy queue one of the two is almost always our
// predecessor. A third comes from the session's Lister (WithLister), which
// remembers the nodes every session of the process created: in a stampede
// of many contenders in one process, the node just before ours is usually
// one of them (Lister.createdBefore).
func (l *Lock) acquire(ctx context.Context, try bool, tr *tracer) (acquired, error) {
	c := &l.core
	hint := l.hint
	l.hint = listingHint{}
	// Names with a version 5 UUID mark nodes only their owner can write
	// (ownerACL): a write to one is its holder's release. Without the
	// owner identity, a random (version 4) UUID says not to rely on that.
	acl, marked := c.s.ownerACL()
	guid := uuid.NewString()
	switch {
	case !marked:
	case l.granted != "" && !try:
		guid = guidAfter(l.granted)
	default:
		guid = guidAfter(uuid.NewString())
	}
	l.granted = "" // one use: a retry after a failure takes a random one
	prefix := ProtectedPrefix + guid + "-" + PrefixLock
	node, err := createWithPrefix(ctx, c.s, c.path, prefix, c.cfg.data, zk.FlagEphemeralSequential, acl, tr)
	if err != nil {
		return acquired{}, err // createWithPrefix cleans up after itself
	}
	// No watch on our own node while waiting: its deletion by someone else
	// shows in the listing that follows every wake-up, and the grant's
	// monitor watches it once held (see lockCore.monitor).
	own := acquired{node: node}
	ours := baseName(node)
	seq, _ := parseSeq(ours)
	own.token = seq + 1 // 0 means not held
	var pred, watched string
	c.s.lister.created(c.path, seq, ours)
	if !try {
		switch {
		case c.s.lister.createdBefore(c.path, seq, &pred):
		case hint.tail != "" && seq == hint.tailSeq+1:
			pred = hint.tail
		case hint.woke != "" && (hint.tail == "" || seq == hint.tailSeq+2):
			pred = fmt.Sprintf("%s%s-%s%0*d", ProtectedPrefix, guidAfter(hint.woke), PrefixLock, SeqDigits, seq-1)
		}
	}
	for {
		if pred == "" {
			children, err := listContaining(ctx, c.s, c.path, ours, tr)
			if err != nil {
				return acquired{}, c.abandon(ctx, node, tr, fmt.Errorf("recipes: list %s: %w", c.path, err))
			}
			found, p, tail := scanListing(children, ours)
			if !found {
				return acquired{}, c.ownGone(node)
			}
			if p == "" {
				l.hint = listingHint{tail: tail, woke: watched}
				l.hint.tailSeq, _ = parseSeq(tail)
				l.granted = ours
				return own, nil
			}
			pred = p
		}
		if try {
			return acquired{}, c.abandon(ctx, node, tr, ErrHeldByOther)
		}
		start := time.Now()
		_, _, ch, err := c.s.Conn().GetW(joinPath(c.path, pred))
		tr.request(OpWatch, start, err)
		watched, pred = pred, ""
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue // gone before the watch was set: look again
		case isConnErr(err):
			if werr := awaitConn(ctx, c.s); werr != nil {
				return acquired{}, c.abandon(ctx, node, tr, werr)
			}
			continue
		case err != nil:
			return acquired{}, c.abandon(ctx, node, tr, fmt.Errorf("recipes: watch predecessor: %w", sessionErr(c.s, err)))
		}
		woke, err := c.waitWake(ctx, ch, &own, tr)
		if err != nil {
			return acquired{}, c.abandon(ctx, node, tr, err)
		}
		if woke == zk.EventNodeDataChanged && ownerWritesOnly(watched) {
			// Our predecessor was released by its holder (releasedMark;
			// nobody else can write it): every node below it was gone
			// when it was granted, and none lies between it and us. We
			// hold the lock.
			l.hint = listingHint{woke: watched}
			l.granted = ours
			return own, nil
		}
	}
}

// releasedMark is the data a holder's release writes to its node in the
// transaction that deletes it (lockCore.markRelease).
var releasedMark = []byte("zkherd:released")

// listingHint is what Lock.acquire learnt when the lock was last granted:
// the last node queued in the granting listing, and the predecessor whose
// deletion woke it ("" if it did not wait).
type listingHint struct {
	tail    string
	tailSeq int64
	woke    string
}

// ownerWritesOnly reports whether a lock node's name marks it as one only
// its owner can write (a zkherd Lock's, created with ownerACL).
func ownerWritesOnly(name string) bool {
	n, ok := ParseNode(name)
	if !ok || n.Layout != LayoutCurator {
		return false
	}
	id, err := uuid.Parse(n.GUID)
	return err == nil && id.Version() == 5
}

// guidAfter derives the UUID a Lock uses for its next node from the name of
// the node it was just granted with (a name-based UUID, version 5), so that
// its successor in the queue can name that next node.
func guidAfter(granted string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(granted)).String()
}

// predecessorOf finds our node among a listing and the recognised node with
// the highest sequence below ours. Allocation-free: it scans once instead of
// sorting, and a listing of thousands is done per wake-up.
func predecessorOf(children []string, ours string) (found bool, pred string) {
	found, pred, _ = scanListing(children, ours)
	return found, pred
}

// scanListing is predecessorOf that also returns the recognised node with
// the highest sequence of all but ours (the queue's tail). It reads every
// name's sequence suffix but parses in full only the names that would
// improve an answer: in the server's unordered listing that is a handful,
// which matters when thousands of children are scanned on each hand-off.
func scanListing(children []string, ours string) (found bool, pred, tail string) {
	ourSeq, ok := parseSeq(ours)
	if !ok {
		return false, "", ""
	}
	best, last := int64(-1), int64(-1)
	for _, name := range children {
		seq, ok := parseSeq(name)
		if !ok {
			continue
		}
		if seq == ourSeq && name == ours {
			found = true
			continue
		}
		improves := seq > last || (seq < ourSeq && seq > best)
		if !improves {
			continue
		}
		if n, ok := ParseNode(name); !ok || n.Seq < 0 {
			continue
		}
		if seq > last {
			last, tail = seq, name
		}
		if seq < ourSeq && seq > best {
			best, pred = seq, name
		}
	}
	return found, pred, tail
}

// LockOption configures NewLock, NewHerdLock and NewHerdChildrenLock.
type LockOption func(*lockConfig)

type lockConfig struct {
	data            []byte
	lostAfter       time.Duration
	lostAfterSet    bool
	trace           *LockTrace
	cleanupDeadline time.Duration
}

// WithLockData sets the data stored in each lock node (for example an
// owner's name, which the inspector shows). Defaults to none.
func WithLockData(data []byte) LockOption {
	return func(c *lockConfig) { c.data = data }
}

// WithLostAfterSuspended sets how long a held lock survives a dropped
// connection before Lost is closed. The default is the session timeout:
// after that long without a server the session has expired there (Curator's
// LOST), while a shorter drop is only SUSPENDED and the lock is still held
// (Curator's standard error policy). d <= 0 closes Lost at the first sign
// of a dropped connection (Curator's session error policy). Expiry, a
// closed session and the node's deletion by someone else always close it.
func WithLostAfterSuspended(d time.Duration) LockOption {
	return func(c *lockConfig) { c.lostAfter, c.lostAfterSet = d, true }
}

// WithTrace reports measurements of every acquisition and release (for the
// load generator). Its functions are called synchronously from Lock,
// TryLock and Unlock and must be quick; share one LockTrace between locks
// only if its functions are safe for concurrent use.
func WithTrace(t *LockTrace) LockOption {
	return func(c *lockConfig) { c.trace = t }
}

// Op names a ZooKeeper request a lock makes, for LockTrace.
type Op uint8

const (
	OpCreate      Op = iota // create of the lock node
	OpGetChildren           // list of the lock's directory (with or without a watch)
	OpWatch                 // exists/getData setting a watch (predecessor, own node, herd node)
	OpExists                // exists without a watch (protected-create recovery)
	OpDelete                // delete of the lock node
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpGetChildren:
		return "getChildren"
	case OpWatch:
		return "watch"
	case OpExists:
		return "exists"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// LockTrace receives measurements from a lock. Nil fields are skipped.
type LockTrace struct {
	// Request is called after every ZooKeeper request, with its round trip.
	Request func(op Op, took time.Duration, err error)
	// Waiting is called when an acquisition starts waiting for a watch.
	Waiting func(at time.Time)
	// Woken is called when a watch the lock waits on fires, with the time
	// the client received it (the server's send time is not observable).
	Woken func(at time.Time)
	// Acquired is called when a Lock or TryLock that had to create a node
	// returns (re-entrant calls are not reported).
	Acquired func(AcquireStats)
	// Released is called when an Unlock that deleted the node returns.
	Released func(ReleaseStats)
}

// AcquireStats summarises one acquisition.
type AcquireStats struct {
	Start   time.Time // Lock or TryLock called
	Granted time.Time // the lock was held; zero when it was not
	Node    string    // node created ("" if none)
	Token   uint64    // fencing token when granted
	// Requests counts ZooKeeper requests made; Wakeups the watch
	// notifications this acquisition waited for and received.
	Requests, Wakeups int
	Err               error
}

// ReleaseStats summarises one release.
type ReleaseStats struct {
	Start    time.Time // Unlock started deleting
	Done     time.Time // the deletion was confirmed (or given up)
	Node     string
	Requests int
	Err      error
}

// tracer counts one operation's requests and wake-ups. A nil *tracer is
// valid and counts nothing.
type tracer struct {
	t                 *LockTrace
	requests, wakeups int
}

func (tr *tracer) request(op Op, start time.Time, err error) {
	if tr == nil {
		return
	}
	tr.requests++
	if tr.t != nil && tr.t.Request != nil {
		tr.t.Request(op, time.Since(start), err)
	}
}

func (tr *tracer) waiting() {
	if tr != nil && tr.t != nil && tr.t.Waiting != nil {
		tr.t.Waiting(time.Now())
	}
}

func (tr *tracer) woken(at time.Time) {
	if tr == nil {
		return
	}
	tr.wakeups++
	if tr.t != nil && tr.t.Woken != nil {
		tr.t.Woken(at)
	}
}

// acquired is what a lock algorithm hands to the shared core.
type acquired struct {
	node string
	// token is the fencing token: the node's creation zxid (herd locks)
	// or its sequence number plus one (Lock.FencingToken).
	token int64
	// own is a watch on our own node; nil when the acquisition set none
	// (the grant's monitor then sets it) or once it fired.
	own <-chan zk.Event
}

// lockCore is what the three locks share: re-entrancy, serialisation, the
// grant's lost monitor, fencing, release, cleanup and tracing. The lock
// algorithm itself is the acquire function.
type lockCore struct {
	s       *Session
	path    string
	cfg     lockConfig
	pathErr error
	acquire func(ctx context.Context, try bool, tr *tracer) (acquired, error)
	// markRelease makes Unlock delete the node together with a write of
	// its data (one transaction): the successor's watch then fires with
	// NodeDataChanged, which only a holder's release causes (see
	// Lock.acquire). Only the fair Lock uses it.
	markRelease bool

	// sem serialises Lock, TryLock and Unlock on one value (a 1-slot
	// semaphore, so that waiting for it honours ctx).
	sem chan struct{}

	mu    sync.Mutex
	count int
	g     *grant // current grant, nil when not held
	last  *grant // the grant before, for Lost and Err when not held
}

// grant is one period of holding the lock.
type grant struct {
	node  string
	token uint64
	own   <-chan zk.Event
	// lost is closed once, when the grant ends: by the monitor goroutine,
	// or by Unlock when the monitor never started.
	lost chan struct{}
	// stop tells the monitor the grant was released; releasing tells it
	// that a deletion of our node is (probably) ours.
	stop      chan struct{}
	releasing atomic.Bool
	reason    error // why lost; written before lost is closed
	// start runs the monitor after monitorDelay; an Unlock that stops it
	// first closes lost itself.
	start *time.Timer
	drops int64 // the session's Suspensions at the grant
}

// monitorDelay is how long a grant lives before its monitor starts. Most
// critical sections under a busy lock are shorter, and then no goroutine,
// watch or notification is spent on them; a longer one is watched from
// then on. Loss within the delay is still caught: the monitor checks the
// session, the drops since the grant and the node's existence when it
// starts, and an Unlock before it checks the session.
const monitorDelay = 10 * time.Millisecond

// errDeletedByOther is part of a grant's reason when its node was deleted
// by another client.
var errDeletedByOther = errors.New("deleted by another client")

// deletedByOther reports a grant lost because its node was deleted by
// another client.
func (g *grant) deletedByOther() bool {
	select {
	case <-g.lost:
		return errors.Is(g.reason, errDeletedByOther)
	default:
		return false
	}
}

var closedCh = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

func (c *lockCore) init(s *Session, path string, opts []LockOption) {
	c.s, c.path = s, path
	c.pathErr = validLockPath(path)
	c.sem = make(chan struct{}, 1)
	for _, o := range opts {
		o(&c.cfg)
	}
	if !c.cfg.lostAfterSet {
		c.cfg.lostAfter = s.Timeout()
	}
	c.cfg.cleanupDeadline = s.Timeout()
}

// enter takes the value's semaphore: at once when free, even if ctx has
// ended (so that a deferred Unlock with a spent ctx still gets its one
// attempt), else waiting as long as ctx allows.
func (c *lockCore) enter(ctx context.Context) error {
	select {
	case c.sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *lockCore) leave() { <-c.sem }

func (c *lockCore) lock(ctx context.Context, try bool) error {
	if c.pathErr != nil {
		return c.pathErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.leave()
	c.mu.Lock()
	if c.count > 0 {
		g := c.g
		select {
		case <-g.lost:
			c.mu.Unlock()
			return fmt.Errorf("recipes: lock %s: %w", c.path, g.reason)
		default:
		}
		if err := c.s.alive(); err != nil {
			c.mu.Unlock()
			return fmt.Errorf("recipes: lock %s: %w: %w", c.path, ErrLost, err)
		}
		c.count++
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	if err := c.s.alive(); err != nil {
		return err
	}

	tr := tracer{t: c.cfg.trace}
	start := time.Now()
	a, err := c.acquire(ctx, try, &tr)
	stats := AcquireStats{Start: start, Node: a.node, Err: err}
	if err == nil {
		g := &grant{
			node:  a.node,
			token: uint64(a.token),
			own:   a.own,
			lost:  make(chan struct{}),
			stop:  make(chan struct{}),
			drops: c.s.Suspensions(),
		}
		c.mu.Lock()
		c.g, c.count = g, 1
		c.mu.Unlock()
		g.start = time.AfterFunc(monitorDelay, func() { c.monitor(g) })
		stats.Granted, stats.Token = time.Now(), g.token
	}
	if t := c.cfg.trace; t != nil && t.Acquired != nil {
		stats.Requests, stats.Wakeups = tr.requests, tr.wakeups
		t.Acquired(stats)
	}
	if err != nil && !errors.Is(err, ErrHeldByOther) && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("recipes: lock %s: %w", c.path, err)
	}
	return err
}

func (c *lockCore) unlock(ctx context.Context) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.leave()
	c.mu.Lock()
	g := c.g
	switch {
	case c.count == 0:
		c.mu.Unlock()
		return fmt.Errorf("recipes: unlock %s: %w", c.path, ErrNotHeld)
	case c.count > 1:
		c.count--
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()

	tr := tracer{t: c.cfg.trace}
	start := time.Now()
	g.releasing.Store(true)
	var err error
	if !g.deletedByOther() {
		// (Deleting it anyway could remove a node someone else created
		// since under the herd lock's fixed name.)
		err = c.deleteOwn(ctx, g.node, c.markRelease, &tr)
	}
	if t := c.cfg.trace; t != nil && t.Released != nil {
		t.Released(ReleaseStats{Start: start, Done: time.Now(), Node: g.node, Requests: tr.requests, Err: err})
	}
	if err != nil {
		// The node may still exist: still held. A later Unlock retries.
		g.releasing.Store(false)
		return fmt.Errorf("recipes: unlock %s: still held: %w", c.path, err)
	}
	if g.start.Stop() {
		// Released before the monitor started: this goroutine is the one
		// that closes lost.
		if err := c.s.alive(); err != nil {
			g.reason = fmt.Errorf("%w: %w", ErrLost, err)
		}
		close(g.lost)
	} else {
		close(g.stop)
		<-g.lost // the monitor ends promptly once stop is closed
	}
	c.mu.Lock()
	c.g, c.last, c.count = nil, g, 0
	c.mu.Unlock()
	if g.reason != nil {
		return fmt.Errorf("recipes: unlock %s: released, but %w", c.path, g.reason)
	}
	return nil
}

// deleteOwn deletes our node and reports nil once it is certainly gone:
// deleted, already absent, or removed with the ended session. asHolder
// marks the deletion as a holder's release (see lockCore.markRelease); it
// must be false for a node that was never granted.
func (c *lockCore) deleteOwn(ctx context.Context, node string, asHolder bool, tr *tracer) error {
	err := retryConn(ctx, c.s, func() error {
		start := time.Now()
		var err error
		if asHolder {
			_, err = c.s.Conn().Multi(
				&zk.SetDataRequest{Path: node, Data: releasedMark, Version: -1},
				&zk.DeleteRequest{Path: node, Version: -1},
			)
		} else {
			err = c.s.Conn().Delete(node, -1)
		}
		tr.request(OpDelete, start, err)
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode),
		errors.Is(err, ErrSessionExpired), errors.Is(err, ErrSessionClosed):
		return nil
	}
	return err
}

// monitor watches one grant and closes its lost channel when the grant
// ends; once started, it is the only goroutine that closes it.
func (c *lockCore) monitor(g *grant) {
	defer close(g.lost)
	var (
		timer   *time.Timer
		timeout <-chan time.Time
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	drops := g.drops
	// Watch our own node unless the acquisition already does. Here rather
	// than on the hand-off path, and not at all when the lock is released
	// before this goroutine gets to it (a zero hold time needs no watch).
	// getData, not exists: on a missing node it leaves no watch behind.
	armed := g.own != nil
	arm := func() (ended bool) {
		if armed || g.releasing.Load() {
			return false
		}
		_, _, ch, err := c.s.Conn().GetW(g.node)
		switch {
		case err == nil:
			g.own, armed = ch, true
		case errors.Is(err, zk.ErrNoNode):
			if !g.releasing.Load() {
				g.reason = fmt.Errorf("%w: node %s %w", ErrLost, g.node, errDeletedByOther)
			}
			return true // otherwise our own Unlock deleted it: released
		}
		return false // connection trouble: again once connected
	}
	if arm() {
		return
	}
	for {
		changed, st := c.s.Changed()
		if c.cfg.lostAfter <= 0 && c.s.Suspensions() != drops {
			// Dropped and maybe already back: the policy tolerates none.
			g.reason = fmt.Errorf("%w: connection dropped (policy: no tolerance)", ErrLost)
			return
		}
		switch st {
		case StateExpired, StateClosed:
			select {
			case <-g.stop:
			default:
				g.reason = fmt.Errorf("%w: %w", ErrLost, c.s.Err())
			}
			return
		case StateSuspended:
			if timer == nil {
				timer = time.NewTimer(max(0, c.cfg.lostAfter-c.s.SuspendedFor()))
				timeout = timer.C
			}
		case StateConnected:
			if timer != nil {
				timer.Stop()
				timer, timeout = nil, nil
			}
			if arm() {
				return
			}
		}
		select {
		case <-g.stop:
			return
		case <-changed:
		case <-timeout:
			g.reason = fmt.Errorf("%w: connection down for %v (policy %v)", ErrLost, c.s.SuspendedFor().Round(time.Millisecond), c.cfg.lostAfter)
			return
		case ev, ok := <-g.own:
			g.own = nil
			switch {
			case ok && ev.Type == zk.EventNodeDeleted:
				if !g.releasing.Load() {
					g.reason = fmt.Errorf("%w: node %s %w", ErrLost, g.node, errDeletedByOther)
				}
				// Otherwise our own Unlock deleted it: released.
				return
			case ok && ev.Type != zk.EventNotWatching:
				// Data changed under us: keep watching.
				armed = false
				if arm() {
					return
				}
			}
			// Not watching: the session ended or was closed; the state
			// change says which.
		}
	}
}

// watchOwn sets the watch on our own node that tells the grant's monitor
// when someone else deletes it, and reads its creation zxid (the fencing
// token). It runs before the first listing, off the hand-off path.
func (c *lockCore) watchOwn(ctx context.Context, node string, tr *tracer) (acquired, error) {
	var (
		exists bool
		stat   *zk.Stat
		ch     <-chan zk.Event
	)
	err := retryConn(ctx, c.s, func() (err error) {
		start := time.Now()
		exists, stat, ch, err = c.s.Conn().ExistsW(node)
		tr.request(OpWatch, start, err)
		return err
	})
	if err != nil {
		return acquired{}, fmt.Errorf("recipes: watch %s: %w", node, err)
	}
	if !exists {
		return acquired{}, c.ownGone(node)
	}
	return acquired{node: node, token: stat.Czxid, own: ch}, nil
}

// waitWake waits for the watch ch to fire, also noticing our own node's
// deletion, the session's end and ctx's end.
func (c *lockCore) waitWake(ctx context.Context, ch <-chan zk.Event, a *acquired, tr *tracer) (zk.EventType, error) {
	tr.waiting()
	for {
		select {
		case ev, ok := <-ch:
			tr.woken(time.Now())
			if !ok || ev.Type == zk.EventNotWatching {
				if err := c.s.alive(); err != nil {
					return 0, err
				}
				return 0, fmt.Errorf("%w on %s", errWatchDropped, ev.Path)
			}
			if ev.Err != nil {
				return 0, fmt.Errorf("recipes: watch on %s: %w", ev.Path, ev.Err)
			}
			return ev.Type, nil
		case ev, ok := <-a.own:
			a.own = nil
			if !ok || ev.Type == zk.EventNotWatching {
				continue // the session's end follows
			}
			if ev.Type == zk.EventNodeDeleted {
				return 0, c.ownGone(a.node)
			}
			rearmed, err := c.watchOwn(ctx, a.node, tr)
			if err != nil {
				return 0, err
			}
			a.own = rearmed.own
		case <-c.s.Done():
			return 0, c.s.Err()
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// ownGone explains why our node is missing.
func (c *lockCore) ownGone(node string) error {
	if err := c.s.alive(); err != nil {
		return err
	}
	return fmt.Errorf("%w: node %s %w", ErrLost, node, errDeletedByOther)
}

// abandon deletes the node of an acquisition that ends without the lock
// (ctx ended, TryLock found it held, an error) and returns cause.
func (c *lockCore) abandon(ctx context.Context, node string, tr *tracer, cause error) error {
	if errors.Is(cause, ErrLost) || c.s.alive() != nil {
		return cause // nothing left to delete
	}
	// The first, synchronous attempt counts in this acquisition's trace;
	// a background retry (connection down) is not traced.
	first := tr
	discard(ctx, c.s, func(ctx context.Context) error {
		t := first
		first = nil
		return c.deleteOwn(ctx, node, false, t)
	})
	return cause
}

func (c *lockCore) lostCh() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.g != nil:
		return c.g.lost
	case c.last != nil:
		return c.last.lost
	}
	return closedCh
}

func (c *lockCore) err() error {
	c.mu.Lock()
	g := c.g
	if g == nil {
		g = c.last
	}
	c.mu.Unlock()
	if g == nil {
		return nil
	}
	select {
	case <-g.lost:
		return g.reason
	default:
		return nil
	}
}

func (c *lockCore) token() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g == nil {
		return 0
	}
	return c.g.token
}

func (c *lockCore) node() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g == nil {
		return ""
	}
	return c.g.node
}
