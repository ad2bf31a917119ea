package recipes

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// ErrLockUpgrade is returned by the write side of an RWLock whose read side
// is held by the same value: the write node would queue behind the value's
// own read node and wait forever.
var ErrLockUpgrade = errors.New("recipes: read lock held: cannot upgrade to the write lock")

// RWLock is a read/write lock in Curator's InterProcessReadWriteLock layout:
// both sides create protected EPHEMERAL_SEQUENTIAL children of one
// directory, "_c_<uuid>-__READ__<seq>" and "_c_<uuid>-__WRIT__<seq>",
// ordered by the sequence suffix.
//
// A writer waits for the node just before its own, as the fair Lock does.
// A reader waits only for the nearest preceding writer: readers ahead of it
// do not matter, so it holds as soon as no writer precedes it. A reader's
// release therefore wakes no other reader (at most the writer right after
// it), and a writer's release wakes exactly the readers it was holding back.
// (Curator's read lock watches the first writer instead, so readers queued
// behind a later writer are woken for nothing.)
//
// An RWLock value is one owner, like a Lock value: ReadLock and WriteLock
// return its two sides, each re-entrant on its own. The owner may take the
// read side while holding the write side (downgrade: Lock the write side,
// Lock the read side, Unlock the write side): it is granted at once, as
// Curator grants it, even when another owner's writer queued meanwhile.
// Since that writer waits only for our write node, the write node then
// stays until the read side is released (other readers behind it wait
// too); without such a writer it goes at once. Taking the write side
// while holding the read side returns ErrLockUpgrade, as it could never
// be granted. A Java process using Curator's InterProcessReadWriteLock on the
// same path shares and excludes with it.
type RWLock struct {
	read, write RWLocker

	mu sync.Mutex
	// kept is our write node, left in place when the write side was
	// released after a downgrade while another owner's writer was queued
	// between it and our read node; the read side's release deletes it.
	kept string
}

// RWLocker is one side of an RWLock. It implements Locker; Lost, Err and
// FencingToken behave as Lock's do.
type RWLocker struct {
	core lockCore
	rw   *RWLock
	kind string // PrefixRead or PrefixWrite
}

var _ Locker = (*RWLocker)(nil)

// NewRWLock returns a read/write lock on path (an absolute znode path, the
// lock's directory, created on first use). The options apply to both sides.
// It does not talk to ZooKeeper.
func NewRWLock(s *Session, path string, opts ...LockOption) *RWLock {
	rw := &RWLock{}
	for _, side := range []*RWLocker{&rw.read, &rw.write} {
		side.rw = rw
		side.core.init(s, path, opts)
		side.core.acquire = side.acquire
	}
	rw.read.kind, rw.write.kind = PrefixRead, PrefixWrite
	rw.write.core.keep = rw.keepForReader
	rw.read.core.released = rw.releaseKept
	return rw
}

// ReadLock is the shared side: any number of owners hold it at once while
// no writer holds or waits ahead of them.
func (rw *RWLock) ReadLock() *RWLocker { return &rw.read }

// WriteLock is the exclusive side.
func (rw *RWLock) WriteLock() *RWLocker { return &rw.write }

// Path is the lock's directory.
func (rw *RWLock) Path() string { return rw.read.core.path }

// Lock blocks until this side is held or ctx ends; when ctx ends first, the
// node it created is deleted before Lock returns.
func (l *RWLocker) Lock(ctx context.Context) error { return l.core.lock(ctx, false) }

// TryLock takes this side if it can be held at once, and otherwise deletes
// its node and returns ErrHeldByOther.
func (l *RWLocker) TryLock(ctx context.Context) error { return l.core.lock(ctx, true) }

// Unlock decrements the hold count and, at zero, deletes the node, as
// Lock.Unlock does.
func (l *RWLocker) Unlock(ctx context.Context) error { return l.core.unlock(ctx) }

// Lost is closed when the current grant ends: lost or released.
func (l *RWLocker) Lost() <-chan struct{} { return l.core.lostCh() }

// Err says why the last grant ended (nil after a clean Unlock).
func (l *RWLocker) Err() error { return l.core.err() }

// FencingToken is the creation zxid of the node held (0 when not held).
// Successive writers get strictly increasing tokens, and every reader's
// token is greater than that of the writers before it.
func (l *RWLocker) FencingToken() uint64 { return l.core.token() }

// Node is the full path of the node held, "" when not held.
func (l *RWLocker) Node() string { return l.core.node() }

// Path is the lock's directory.
func (l *RWLocker) Path() string { return l.core.path }

// IsReader reports whether this is the read side.
func (l *RWLocker) IsReader() bool { return l.kind == PrefixRead }

func (l *RWLocker) acquire(ctx context.Context, try bool, tr *tracer) (acquired, error) {
	c := &l.core
	if l.IsReader() {
		// Holding the write side, the owner takes the read side at once
		// (a downgrade, as Curator allows): nobody else can hold either
		// side, and waiting would queue us behind another owner's writer
		// that waits for our write node (keepForReader keeps that writer
		// out once the write side is released).
		if w := &l.rw.write.core; w.node() != "" && w.err() == nil {
			return acquireSequential(ctx, c, try, tr, PrefixRead, c.cfg.data, func(children []string, ours string) (bool, string) {
				return slices.Contains(children, ours), ""
			})
		}
		return acquireSequential(ctx, c, try, tr, PrefixRead, c.cfg.data, func(children []string, ours string) (bool, string) {
			return waitTarget(children, ours, func(n Node) bool { return n.Kind != KindRead })
		})
	}
	if l.rw.read.core.node() != "" {
		return acquired{}, ErrLockUpgrade
	}
	return acquireSequential(ctx, c, try, tr, PrefixWrite, c.cfg.data, func(children []string, ours string) (bool, string) {
		return waitTarget(children, ours, nil)
	})
}

// waitTarget finds our node in a listing and, among the recognised nodes
// with a lower sequence for which blocks returns true (all of them when
// blocks is nil), the one with the highest sequence: the single node to
// watch. wait is "" when nothing blocks us. Allocation-free, like
// predecessorOf: a listing is scanned on every wake-up.
func waitTarget(children []string, ours string, blocks func(Node) bool) (found bool, wait string) {
	ourSeq, ok := parseSeq(ours)
	if !ok {
		return false, ""
	}
	best := int64(-1)
	for _, name := range children {
		if name == ours {
			found = true
			continue
		}
		n, ok := ParseNode(name)
		if !ok || n.Seq < 0 || n.Seq >= ourSeq || n.Seq <= best {
			continue
		}
		if blocks == nil || blocks(n) {
			best, wait = n.Seq, name
		}
	}
	return found, wait
}

// keepForReader is the write side's keep: after a downgrade, our read node
// was created behind any writer of another owner that queued meanwhile,
// and that writer waits only for our write node. Deleting it would let the
// writer in while we read; so when such a writer lies between our two
// nodes, the write node stays until the read side is released. (A writer
// queued later waits behind our read node: the listing here is enough.)
func (rw *RWLock) keepForReader(ctx context.Context, node string) bool {
	read := rw.read.core.node()
	if read == "" {
		return false
	}
	children, _, err := childrenOf(ctx, rw.read.core.s, rw.read.core.path)
	wseq, _ := parseSeq(node)
	rseq, _ := parseSeq(read)
	between := err != nil // when in doubt, keep: safe, and deleted later
	for _, name := range children {
		if n, ok := ParseNode(name); ok && n.Kind != KindRead && n.Seq > wseq && n.Seq < rseq {
			between = true
		}
	}
	if !between {
		return false
	}
	rw.mu.Lock()
	rw.kept = node
	rw.mu.Unlock()
	return true
}

// releaseKept is the read side's released hook: it deletes the write node
// keepForReader kept, now that the read side is released.
func (rw *RWLock) releaseKept(ctx context.Context) {
	rw.mu.Lock()
	kept := rw.kept
	rw.kept = ""
	rw.mu.Unlock()
	if kept == "" {
		return
	}
	s := rw.read.core.s
	discard(ctx, s, func(ctx context.Context) error { return deleteConfirmed(ctx, s, kept) })
}
