package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// The grant engine that the fair Lock, the herd locks, both sides of the
// RWLock, the semaphore's Lease and the Election share: re-entrancy,
// serialisation, the grant's lost monitor, fencing, release, cleanup and
// tracing, plus the two acquire loops more than one of them uses
// (acquireSequential, acquireOnChildren).

// acquired is what a lock algorithm hands to the shared core.
type acquired struct {
	node string
	// token is the fencing token: the node's creation zxid, which keeps
	// growing when the directory is deleted and created anew.
	token int64
	// own is a watch on our own node; nil when the acquisition set none
	// (the grant's monitor then sets it) or once it fired.
	own <-chan zk.Event
	// marked: the node is owner-written (ownerACL), so its release writes
	// the release mark (see Lock.acquire). Only the fair Lock's are.
	marked bool
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
	// handOff, when set, says which hand-off an acquisition used, for
	// AcquireStats (the fair Lock's).
	handOff func() HandOff
	// keep, when set, is asked before a release deletes the node: true
	// hands the node on to another holder of the same owner instead (the
	// RWLock's read side after a downgrade).
	keep func(ctx context.Context, node string) bool
	// released, when set, runs once a grant ended by Unlock: its node
	// deleted, or found deleted by another client.
	released func(ctx context.Context)
	// fixedName: every holder's node has the same name (the herd lock),
	// so a release deletes by creation zxid, never by name (deleteOwn).
	fixedName bool
	// acquiring is set while Lock or TryLock waits for the lock, so that
	// a TryLock on the same value can say so at once (ErrLockPending).
	acquiring atomic.Bool

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
	node   string
	token  uint64
	own    <-chan zk.Event
	marked bool // released with the release mark
	// lost is closed once, when the grant ends: by the monitor goroutine,
	// or by Unlock when the monitor never started.
	lost chan struct{}
	// stop tells the monitor the grant was released; releasing tells it
	// that a deletion of our node is (probably) ours.
	stop      chan struct{}
	releasing atomic.Bool
	// reason is why lost: written before lost is closed, or after, by
	// the Unlock that found the grant lost, under lockCore.mu (read under
	// it once lost is closed).
	reason error
	// start runs the monitor after monitorDelay; an Unlock that stops it
	// first closes lost itself.
	start *time.Timer
	drops int64 // the session's Suspensions at the grant
	// deleteSent: an Unlock's delete may have been carried out, its
	// outcome never learnt (guarded by the lock's sem).
	deleteSent bool
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
	if try && c.acquiring.Load() {
		return fmt.Errorf("recipes: trylock %s: %w", c.path, ErrLockPending)
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
	c.acquiring.Store(true)
	a, err := c.acquire(ctx, try, &tr)
	if err == nil {
		err = c.confirmGrant(ctx, a.node, &tr)
	}
	c.acquiring.Store(false)
	stats := AcquireStats{Start: start, Node: a.node, Err: err}
	if c.handOff != nil {
		stats.HandOff = c.handOff()
	}
	if err == nil {
		g := &grant{
			node:   a.node,
			token:  uint64(a.token),
			own:    a.own,
			marked: a.marked,
			lost:   make(chan struct{}),
			stop:   make(chan struct{}),
			drops:  c.s.Suspensions(),
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

// confirmGrant checks, before an acquisition returns, that the session
// holding node is still alive, when the server has not been heard for
// longer than a grant's monitor allows (silenceLimit) or the connection is
// down. An acquisition decides it holds the lock from what the server
// said: a listing, a notification. A process paused (GC, SIGSTOP, a frozen
// VM) reads on resuming what the server sent before it expired the
// session, and a waiter would return a grant already lost, with the next
// waiter granted meanwhile: the fair lock's hand-off grants on the release
// mark alone, with no request after it (issue 21; fair-lock-chaos with
// pause-client, the oracle's mutex model failing on a grant returned after
// the next one). While the server was heard within the limit, the session
// cannot have expired yet (see wireSeen.answered), so on a lock's busy
// path this costs a clock read. Otherwise one request on the session
// tells: its answer renews the session, which then holds node (if it
// still exists, nobody else can be granted); an expired session ends the
// acquisition with ErrLost. The wait for an answer is bounded by ctx and
// the session timeout; past it, the node is abandoned and the grant
// reported lost.
func (c *lockCore) confirmGrant(ctx context.Context, node string, tr *tracer) error {
	if !c.s.inDoubt() {
		return nil
	}
	silent := c.s.silentFor()
	bounded, cancel := context.WithTimeout(ctx, c.s.Timeout())
	defer cancel()
	var (
		exists bool
		stat   *zk.Stat
	)
	err := retryConn(bounded, c.s, func() (err error) {
		start := time.Now()
		exists, stat, err = c.s.Conn().Exists(node)
		tr.request(OpExists, start, err)
		return err
	})
	switch {
	case err == nil && exists && stat.EphemeralOwner == c.s.ID():
		return nil
	case err == nil:
		return c.ownGone(ctx, node)
	case sessionEnded(err):
		return fmt.Errorf("%w: %w before its grant could be confirmed (the server silent for %v)", ErrLost, err, silent.Round(time.Millisecond))
	}
	c.abandon(ctx, node, tr, err)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: granted while the server was silent for %v, and no server confirmed the session within %v: %w",
		ErrLost, silent.Round(time.Millisecond), c.s.Timeout(), err)
}

// waitWake waits for the watch ch to fire, also noticing our own node's
// deletion, the session's end and ctx's end.
func (c *lockCore) waitWake(ctx context.Context, ch <-chan zk.Event, a *acquired, tr *tracer) (zk.EventType, error) {
	tr.waiting()
	for {
		select {
		case ev, ok := <-ch:
			tr.woken(time.Now())
			// Our own node's deletion, if it happened before this event,
			// was delivered before it (a session's notifications come in
			// transaction order): look first, so that a waiter whose node
			// is gone is never granted on a later event.
			select {
			case oev, ok := <-a.own:
				a.own = nil
				if err := c.ownEvent(ctx, oev, ok, a, tr); err != nil {
					return 0, err
				}
			default:
			}
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
			if err := c.ownEvent(ctx, ev, ok, a, tr); err != nil {
				return 0, err
			}
		case <-c.s.Done():
			return 0, c.s.Err()
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
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
		_, err := c.deleteOwn(ctx, node, 0, false, t)
		return err
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
	defer c.mu.Unlock()
	g := c.g
	if g == nil {
		g = c.last
	}
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

// ownedByUs reports whether node exists and is this session's ephemeral.
func (c *lockCore) ownedByUs(ctx context.Context, node string) bool {
	var (
		exists bool
		stat   *zk.Stat
	)
	err := retryConn(ctx, c.s, func() (err error) {
		exists, stat, err = c.s.Conn().Exists(node)
		return err
	})
	return err == nil && exists && stat.EphemeralOwner == c.s.ID()
}

// discardIfOurs removes node if this session turns out to own it; for a
// herd create abandoned while its outcome was unknown.
func (c *lockCore) discardIfOurs(ctx context.Context, node string, cause error) error {
	if c.s.alive() != nil {
		return cause
	}
	discard(ctx, c.s, func(ctx context.Context) error {
		_, err := deleteIfOwned(ctx, c.s, node, 0, false, nil)
		return err
	})
	return cause
}

// watchPredecessor sets a data watch on the node pred of the lock's
// directory, the one node a sequential contender waits for (getData, not
// exists: on a missing node it sets no watch). A nil channel with a nil
// error means look again: pred is gone, or the connection dropped and is
// back. A reply too large for the receive buffer (a foreign node's data;
// see Lister) fails with ErrReplyTooLarge at once, since go-zookeeper
// drops the connection on it and retrying would loop (issue 21: the
// election and the read/write lock did, for as long as ctx allowed).
func (c *lockCore) watchPredecessor(ctx context.Context, pred string, tr *tracer) (<-chan zk.Event, error) {
	start := time.Now()
	tooLarge := c.s.tooLarge.Load()
	_, _, ch, err := c.s.Conn().GetW(joinPath(c.path, pred))
	tr.request(OpWatch, start, err)
	switch {
	case err == nil:
		return ch, nil
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil
	case isConnErr(err):
		if err := c.s.replyTooLargeSince(tooLarge); err != nil {
			return nil, err
		}
		return nil, awaitConn(ctx, c.s)
	}
	return nil, fmt.Errorf("recipes: watch predecessor %s: %w", pred, sessionErr(c.s, err))
}

// acquireOnChildren is the acquire loop of the recipes whose waiters watch
// the whole directory (the herd-children lock; the semaphore's lease step):
// enqueue a protected node of kind, then list with a child watch until
// decide says the node is granted (or gone). Every child change wakes it.
func (c *lockCore) acquireOnChildren(ctx context.Context, try bool, kind string, tr *tracer,
	decide func(children []string, ours string) (found, granted bool)) (acquired, error) {
	node, err := createWithPrefix(ctx, c.s, c.path, newProtectedPrefix(kind), c.cfg.data, zk.FlagEphemeralSequential, openACL, tr)
	if err != nil {
		return acquired{}, err
	}
	own, err := c.watchOwn(ctx, node, tr)
	if err != nil {
		return acquired{}, c.abandon(ctx, node, tr, err)
	}
	ours := baseName(node)
	for {
		var (
			children []string
			ch       <-chan zk.Event
		)
		err := retryConn(ctx, c.s, func() (err error) {
			start := time.Now()
			children, _, ch, err = c.s.Conn().ChildrenW(c.path)
			tr.request(OpGetChildren, start, err)
			return err
		})
		if err != nil {
			return acquired{}, c.abandon(ctx, node, tr, fmt.Errorf("recipes: list %s: %w", c.path, err))
		}
		found, granted := decide(children, ours)
		if !found {
			return acquired{}, c.ownGone(ctx, node)
		}
		if granted {
			return own, nil
		}
		if try {
			return acquired{}, c.abandon(ctx, node, tr, ErrHeldByOther)
		}
		if _, err := c.waitWake(ctx, ch, &own, tr); err != nil {
			return acquired{}, c.abandon(ctx, node, tr, err)
		}
	}
}

// acquireSequential is the fair lock's algorithm with the node's kind and
// the rule of whom to wait for as parameters (the read/write lock and the
// election use it): protected EPHEMERAL_SEQUENTIAL create, list, and wait
// for the one node pick names, until it names none.
func acquireSequential(ctx context.Context, c *lockCore, try bool, tr *tracer, kind string, data []byte,
	pick func(children []string, ours string) (found bool, wait string)) (acquired, error) {
	node, err := createWithPrefix(ctx, c.s, c.path, newProtectedPrefix(kind), data, zk.FlagEphemeralSequential, openACL, tr)
	if err != nil {
		return acquired{}, err // createWithPrefix cleans up after itself
	}
	own, err := c.watchOwn(ctx, node, tr)
	if err != nil {
		return acquired{}, c.abandon(ctx, node, tr, err)
	}
	ours := baseName(node)
	for {
		var children []string
		err := retryConn(ctx, c.s, func() (err error) {
			start := time.Now()
			children, _, err = c.s.Conn().Children(c.path)
			tr.request(OpGetChildren, start, err)
			return err
		})
		if err != nil {
			return acquired{}, c.abandon(ctx, node, tr, fmt.Errorf("recipes: list %s: %w", c.path, err))
		}
		found, wait := pick(children, ours)
		if !found {
			return acquired{}, c.ownGone(ctx, node)
		}
		if wait == "" {
			return own, nil
		}
		if try {
			return acquired{}, c.abandon(ctx, node, tr, ErrHeldByOther)
		}
		ch, err := c.watchPredecessor(ctx, wait, tr)
		if err != nil {
			return acquired{}, c.abandon(ctx, node, tr, err)
		}
		if ch == nil {
			continue // gone between the list and the watch, or reconnected: look again
		}
		if _, err := c.waitWake(ctx, ch, &own, tr); err != nil {
			return acquired{}, c.abandon(ctx, node, tr, err)
		}
	}
}
