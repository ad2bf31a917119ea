package recipes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// The two naive locks. Both are correct (mutually exclusive, no deadlock
// when a holder dies) but every release wakes every waiter: the herd effect
// the load generator measures against the fair Lock. Do not use them for
// anything else.

// HerdLock is the naive lock: every contender tries to create the same
// ephemeral node (HerdNodeName under the lock's path); on NodeExists each
// one watches that node with exists, and when it is deleted all of them
// wake and race to create it again. Grants are in no particular order.
// It does not exclude, nor is it excluded by, the sequential-node locks on
// the same path.
type HerdLock struct{ core lockCore }

// NewHerdLock returns a herd lock on path (created on first use).
func NewHerdLock(s *Session, path string, opts ...LockOption) *HerdLock {
	l := &HerdLock{}
	l.core.init(s, path, opts)
	l.core.acquire = l.acquire
	l.core.fixedName = true
	return l
}

// Lock blocks until the lock is held or ctx ends.
func (l *HerdLock) Lock(ctx context.Context) error { return l.core.lock(ctx, false) }

// TryLock takes the lock if the node is free, else returns ErrHeldByOther.
func (l *HerdLock) TryLock(ctx context.Context) error { return l.core.lock(ctx, true) }

// Unlock works as Lock.Unlock does.
func (l *HerdLock) Unlock(ctx context.Context) error { return l.core.unlock(ctx) }

// Lost works as Lock.Lost does.
func (l *HerdLock) Lost() <-chan struct{} { return l.core.lostCh() }

// Err works as Lock.Err does.
func (l *HerdLock) Err() error { return l.core.err() }

// FencingToken is the creation zxid of the herd node while held.
func (l *HerdLock) FencingToken() uint64 { return l.core.token() }

// Node is the herd node's path while held, "" otherwise.
func (l *HerdLock) Node() string { return l.core.node() }

// Path is the lock's directory.
func (l *HerdLock) Path() string { return l.core.path }

func (l *HerdLock) acquire(ctx context.Context, try bool, tr *tracer) (acquired, error) {
	c := &l.core
	node := joinPath(c.path, HerdNodeName)
	madeDir := false
	// unknown is set once a create's reply was lost: until we know, the
	// node there may be ours, and giving up must not leave it behind.
	unknown := false
	fail := func(err error) (acquired, error) {
		if unknown {
			return acquired{}, c.discardIfOurs(ctx, node, err)
		}
		return acquired{}, err
	}
	for {
		if err := c.s.alive(); err != nil {
			return acquired{}, err
		}
		start := time.Now()
		_, err := c.s.Conn().Create(node, c.cfg.data, zk.FlagEphemeral, openACL)
		tr.request(OpCreate, start, err)
		switch {
		case err == nil:
			a, err := c.watchOwn(ctx, node, tr)
			if err != nil {
				return acquired{}, c.abandon(ctx, node, tr, err)
			}
			return a, nil
		case errors.Is(err, zk.ErrNoNode) && !madeDir:
			madeDir = true
			if err := ensurePath(ctx, c.s, c.path); err != nil {
				return acquired{}, err
			}
		case errors.Is(err, zk.ErrNodeExists):
			if try && !(unknown && c.ownedByUs(ctx, node)) {
				return fail(ErrHeldByOther)
			}
			start := time.Now()
			exists, stat, ch, err := c.s.Conn().ExistsW(node)
			tr.request(OpWatch, start, err)
			switch {
			case isConnErr(err):
				if err := awaitConn(ctx, c.s); err != nil {
					return fail(err)
				}
				continue
			case err != nil:
				return fail(fmt.Errorf("recipes: watch %s: %w", node, sessionErr(c.s, err)))
			case !exists:
				// Deleted between the create and the watch. The exists
				// watch now waits for the next creation; harmless here.
				continue
			case stat.EphemeralOwner == c.s.ID():
				// Our own node, from a create whose reply was lost: held.
				// (Waiting for it would wait for ever.)
				return acquired{node: node, token: stat.Czxid, own: ch}, nil
			}
			var none acquired
			if _, err := c.waitWake(ctx, ch, &none, tr); err != nil {
				return fail(err)
			}
		case isConnErr(err):
			// The create's outcome is unknown: the node is ours if it
			// exists and this session owns it (a synced read: see
			// syncLost).
			unknown = true
			if err := awaitConn(ctx, c.s); err != nil {
				return fail(err)
			}
			if err := syncLost(ctx, c.s, node); err != nil {
				return fail(err)
			}
			if c.ownedByUs(ctx, node) {
				a, err := c.watchOwn(ctx, node, tr)
				if err != nil {
					return acquired{}, c.abandon(ctx, node, tr, err)
				}
				return a, nil
			}
		default:
			return acquired{}, fmt.Errorf("recipes: create %s: %w", node, sessionErr(c.s, err))
		}
	}
}

// HerdChildrenLock is the second naive lock: contenders create protected
// sequential nodes like the fair Lock (same names, same order, so the two
// exclude each other on one path), but every waiter watches the whole
// directory with getChildren and re-evaluates on every child change, so
// every release and every new contender wakes all waiters.
type HerdChildrenLock struct{ core lockCore }

// NewHerdChildrenLock returns a herd-children lock on path.
func NewHerdChildrenLock(s *Session, path string, opts ...LockOption) *HerdChildrenLock {
	l := &HerdChildrenLock{}
	l.core.init(s, path, opts)
	l.core.acquire = l.acquire
	return l
}

// Lock blocks until the lock is held or ctx ends.
func (l *HerdChildrenLock) Lock(ctx context.Context) error { return l.core.lock(ctx, false) }

// TryLock takes the lock if nobody holds or waits, else ErrHeldByOther.
func (l *HerdChildrenLock) TryLock(ctx context.Context) error { return l.core.lock(ctx, true) }

// Unlock works as Lock.Unlock does.
func (l *HerdChildrenLock) Unlock(ctx context.Context) error { return l.core.unlock(ctx) }

// Lost works as Lock.Lost does.
func (l *HerdChildrenLock) Lost() <-chan struct{} { return l.core.lostCh() }

// Err works as Lock.Err does.
func (l *HerdChildrenLock) Err() error { return l.core.err() }

// FencingToken is the creation zxid of the node held.
func (l *HerdChildrenLock) FencingToken() uint64 { return l.core.token() }

// Node is the path of the node held, "" when not held.
func (l *HerdChildrenLock) Node() string { return l.core.node() }

// Path is the lock's directory.
func (l *HerdChildrenLock) Path() string { return l.core.path }

func (l *HerdChildrenLock) acquire(ctx context.Context, try bool, tr *tracer) (acquired, error) {
	return l.core.acquireOnChildren(ctx, try, PrefixLock, tr, func(children []string, ours string) (found, granted bool) {
		found, pred := predecessorOf(children, ours)
		return found, pred == ""
	})
}
