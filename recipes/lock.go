package recipes

import (
	"context"
	"fmt"
	"sync/atomic"

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
	core    lockCore
	handOff atomic.Uint32 // HandOff of the last acquisition
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
	l.core.handOff = l.HandOff
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
// ctx has already ended (a deferred Unlock); if ctx ends before a delete
// reached the server, the lock is still held (the error says so) and
// Unlock may be called again. A delete whose reply was lost is read back
// past ctx's end, for up to the session timeout; if that cannot tell, the
// error wraps ErrOutcomeUnknown, and the lock counts as held until an
// Unlock confirms the release. If the grant had been lost, the lock is
// released all the same and the error wraps ErrLost: also when the session
// expired under a holder that was paused or cut off (another holder may
// have been granted meanwhile), whatever Lost said before. ErrNotHeld when
// not held.
func (l *Lock) Unlock(ctx context.Context) error { return l.core.unlock(ctx) }

// Lost returns a channel closed when the current grant ends: when ownership
// can no longer be trusted (the session expired or was closed, the node was
// deleted by someone else, the connection was down longer than the
// WithLostAfterSuspended policy allows, or the server was silent for nine
// tenths of the granted session timeout), or when Unlock released it. When
// not held it returns a closed channel. See Err for the reason. Watching
// starts 10 ms into a grant (shorter holds need none); a loss within that
// time is reported then.
func (l *Lock) Lost() <-chan struct{} { return l.core.lostCh() }

// Err says why the last grant ended: nil while held or after a clean
// Unlock, and an error wrapping ErrLost once ownership was lost.
func (l *Lock) Err() error { return l.core.err() }

// FencingToken identifies the current grant (0 when not held): the
// creation zxid of the node held. Grants follow creation order, and zxids
// grow with every transaction the ensemble applies, so successive holders
// get strictly increasing tokens, and a resource that remembers the
// highest token seen can reject a holder that lost the lock without
// knowing. Unlike the node's sequence number, the zxid keeps growing when
// the lock's directory is deleted and created anew (a container reaped
// when empty, an operator's delete): tokens never go backwards.
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
// say so. That holds only where the server is seen to enforce the ACL: a
// probe at first use (probeOwnerACL) checks that our identity may write
// such a node and a foreign one may not; on a server with skipACL=yes, or
// another digest algorithm than the clients' SHA-1, nodes get random
// names and the open ACL, and every hand-off lists (HandOffListing; see
// HandOff). Any other wake-up (an abandoned waiter, an expired session, a
// Curator holder) is followed by a listing as usual. A waiter watches its
// own node from the start, so that one whose node someone else deleted
// learns it before the release mark could grant it (waitWake).
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
	// (ownerACL): a write to one is its holder's release. Where the server
	// does not enforce that, or the owner identity is missing, a random
	// (version 4) UUID says not to rely on it, and this acquisition hands
	// off by listing.
	acl, marked := c.s.ownerACL(ctx, c.path)
	if c.cfg.listingHandOff {
		acl, marked = openACL, false
	}
	l.handOff.Store(uint32(handOffOf(marked)))
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
	seq, _ := parseSeq(node) // createWithPrefix checked it (ownSequence)
	// A watch on our own node before we wait or are granted: a waiter whose
	// node someone else deleted must learn it before any later event (a
	// release mark on the node it watched) could grant it, and the server
	// delivers a session's notifications in the order of their
	// transactions. Its stat gives the fencing token, the node's creation
	// zxid. (Set after the first listing, not before: a TryLock that fails
	// needs none.)
	own := acquired{node: node, marked: marked}
	armed := false
	armOwn := func() error {
		if armed {
			return nil
		}
		a, err := c.watchOwn(ctx, node, tr)
		if err != nil {
			return err
		}
		own.own, own.token, armed = a.own, a.token, true
		return nil
	}
	ours := baseName(node)
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
				return acquired{}, c.ownGone(ctx, node)
			}
			if p == "" {
				if err := armOwn(); err != nil {
					return acquired{}, c.abandon(ctx, node, tr, err)
				}
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
		if err := armOwn(); err != nil {
			return acquired{}, c.abandon(ctx, node, tr, err)
		}
		ch, err := c.watchPredecessor(ctx, pred, tr)
		watched, pred = pred, ""
		if err != nil {
			return acquired{}, c.abandon(ctx, node, tr, err)
		}
		if ch == nil {
			continue // gone before the watch was set, or reconnected: look again
		}
		woke, err := c.waitWake(ctx, ch, &own, tr)
		if err != nil {
			return acquired{}, c.abandon(ctx, node, tr, err)
		}
		if woke == zk.EventNodeDataChanged && marked && ownerWritesOnly(watched) {
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
