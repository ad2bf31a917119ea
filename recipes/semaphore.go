package recipes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-zookeeper/zk"
)

// ErrLeasesMismatch means contenders disagree on a semaphore's number of
// leases: the semaphore's node records another number than the one asked.
var ErrLeasesMismatch = errors.New("recipes: semaphore lease count mismatch")

// Children of a semaphore's path, as Curator's InterProcessSemaphoreV2 names
// them.
const (
	SemaphoreLocks  = "locks"  // the mutex that admits one waiter at a time
	SemaphoreLeases = "leases" // one "_c_<uuid>-lease-<seq>" node per lease held
)

// Semaphore hands out at most N leases at once, following Curator's
// InterProcessSemaphoreV2 protocol exactly, so Java and Go processes can
// share one:
//
//  1. take the fair lock <path>/locks;
//  2. create a protected EPHEMERAL_SEQUENTIAL node "_c_<uuid>-lease-<seq>"
//     under <path>/leases;
//  3. list <path>/leases with a child watch; at most N children means the
//     lease is ours, otherwise wait for the watch and list again;
//  4. release the lock.
//
// Only the lock's holder ever waits for a lease, and it is the only one
// watching the leases, so a released lease wakes exactly one session, and
// leases go out in arrival order (the lock is fair). The rule sometimes
// proposed instead, "the contender at index i holds when i < N and
// otherwise watches the node at i-N", has no lock but loses wake-ups:
// when a holder other than the watched one releases, the waiter that is
// now within the first N watches a node that is still there, and the free
// lease stays idle until that node goes.
//
// All contenders must agree on N. The semaphore's own node (<path>) records
// it, as a decimal number, the first time any zkherd contender uses the
// path; a contender asking for another number gets ErrLeasesMismatch.
// (Curator does not read that data, nor write it.)
//
// A lease is held by its node, so it ends with its owner's session: a
// crashed holder's lease returns to the pool when the servers expire its
// session.
type Semaphore struct {
	s       *Session
	path    string
	leases  int
	opts    []LockOption
	pathErr error
	// agreed is closed once this value has checked the recorded N.
	agreed chan struct{}
	// agreeing is a 1-slot semaphore serialising that check.
	agreeing chan struct{}
}

// NewSemaphore returns a semaphore with leases leases on path (an absolute
// znode path, created on first use). The options configure each Lease (its
// node's data, its lost policy, tracing). It does not talk to ZooKeeper.
func NewSemaphore(s *Session, path string, leases int, opts ...LockOption) *Semaphore {
	sem := &Semaphore{
		s: s, path: path, leases: leases, opts: opts,
		agreed:   make(chan struct{}),
		agreeing: make(chan struct{}, 1),
	}
	sem.pathErr = validLockPath(path)
	if sem.pathErr == nil && leases < 1 {
		sem.pathErr = fmt.Errorf("recipes: semaphore %s: %d leases: want at least 1", path, leases)
	}
	return sem
}

// Path is the semaphore's node.
func (sem *Semaphore) Path() string { return sem.path }

// Leases is the number of leases.
func (sem *Semaphore) Leases() int { return sem.leases }

// Acquire blocks until it holds a lease or ctx ends. When ctx ends first,
// the nodes it created are deleted before it returns. Safe for concurrent
// use: each call gets its own Lease.
func (sem *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	return sem.acquire(ctx, false)
}

// TryAcquire takes a lease if one is free, and otherwise returns
// ErrHeldByOther without waiting for one. A contender that is taking a
// lease holds the semaphore's mutex for a moment; TryAcquire then waits
// for its turn as long as a lease is free, and gives up as soon as none
// is (a contender waiting for a lease holds the mutex until one is).
func (sem *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) {
	return sem.acquire(ctx, true)
}

func (sem *Semaphore) acquire(ctx context.Context, try bool) (*Lease, error) {
	if sem.pathErr != nil {
		return nil, sem.pathErr
	}
	if err := sem.agree(ctx); err != nil {
		return nil, err
	}
	// A fresh Lock per call: the lock is re-entrant per value, and two
	// concurrent Acquire calls must not share one grant.
	mutex := NewLock(sem.s, joinPath(sem.path, SemaphoreLocks))
	var err error
	if try {
		err = sem.lockForTry(ctx, mutex)
	} else {
		err = mutex.Lock(ctx)
	}
	if err != nil {
		if errors.Is(err, ErrHeldByOther) || errors.Is(err, ctx.Err()) {
			return nil, err
		}
		return nil, fmt.Errorf("recipes: semaphore %s: %w", sem.path, err)
	}
	defer discard(ctx, sem.s, func(ctx context.Context) error {
		err := mutex.Unlock(ctx)
		if errors.Is(err, ErrLost) || errors.Is(err, ErrNotHeld) {
			return nil // released all the same
		}
		return err
	})

	l := &Lease{leases: sem.leases}
	l.core.init(sem.s, joinPath(sem.path, SemaphoreLeases), sem.opts)
	l.core.acquire = l.acquire
	if err := l.core.lock(ctx, try); err != nil {
		return nil, err
	}
	return l, nil
}

// errNoLeaseFree ends lockForTry's wait for the mutex.
var errNoLeaseFree = errors.New("no lease free")

// lockForTry takes the semaphore's mutex for TryAcquire. The mutex is held
// by a contender while it takes a lease, or waits for one when none is
// free, so a held mutex does not say that no lease is free (issue 21:
// TryAcquire refused free leases about half the time while another
// contender was acquiring). When TryLock finds it held, lockForTry queues
// for the mutex while it watches the leases, and gives up with
// ErrHeldByOther once they are all out.
func (sem *Semaphore) lockForTry(ctx context.Context, mutex *Lock) error {
	err := mutex.TryLock(ctx)
	if !errors.Is(err, ErrHeldByOther) {
		return err
	}
	lockCtx, cancel := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if err := sem.awaitLeasesOut(lockCtx); err == nil {
			cancel(errNoLeaseFree)
		}
	}()
	err = mutex.Lock(lockCtx)
	cancel(context.Canceled)
	<-watched
	if err != nil && errors.Is(context.Cause(lockCtx), errNoLeaseFree) && ctx.Err() == nil {
		return fmt.Errorf("recipes: semaphore %s: %w: %w", sem.path, errNoLeaseFree, ErrHeldByOther)
	}
	return err
}

// awaitLeasesOut returns nil once every lease is out (as many lease nodes
// as leases, or more: a contender waiting for one has its node there too),
// or ctx's error first.
func (sem *Semaphore) awaitLeasesOut(ctx context.Context) error {
	dir := joinPath(sem.path, SemaphoreLeases)
	conn := sem.s.Conn()
	for {
		var (
			children []string
			exists   bool
			ch       <-chan zk.Event
		)
		err := retryConn(ctx, sem.s, func() (err error) {
			children, _, ch, err = conn.ChildrenW(dir)
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			// No lease was ever taken: wait for the directory.
			err = retryConn(ctx, sem.s, func() (err error) {
				exists, _, ch, err = conn.ExistsW(dir)
				return err
			})
			if err == nil && exists {
				continue
			}
		}
		if err != nil {
			return err
		}
		if len(children) >= sem.leases {
			return nil
		}
		if _, err := waitEvent(ctx, sem.s, ch); err != nil && !errors.Is(err, errWatchDropped) {
			return err
		}
	}
}

// agree records N in the semaphore's node, or checks the number there.
func (sem *Semaphore) agree(ctx context.Context) error {
	select {
	case <-sem.agreed:
		return nil
	case sem.agreeing <- struct{}{}:
		defer func() { <-sem.agreeing }()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-sem.agreed:
		return nil // another call agreed while we waited
	default:
	}
	want := strconv.Itoa(sem.leases)
	conn := sem.s.Conn()
	for {
		var (
			data []byte
			stat *zk.Stat
		)
		err := retryConn(ctx, sem.s, func() (err error) {
			data, stat, err = conn.Get(sem.path)
			return err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			if err := ensurePath(ctx, sem.s, sem.path); err != nil {
				return err
			}
			continue // created empty (or by another contender): read again
		case err != nil:
			return fmt.Errorf("recipes: semaphore %s: read lease count: %w", sem.path, err)
		case len(data) == 0:
			// New, or made by Curator: record ours. A lost reply is retried
			// with the same version and then fails, and the next read shows
			// what won.
			err := retryConn(ctx, sem.s, func() error {
				_, err := conn.Set(sem.path, []byte(want), stat.Version)
				return err
			})
			if err != nil && !errors.Is(err, zk.ErrBadVersion) {
				return fmt.Errorf("recipes: semaphore %s: record lease count: %w", sem.path, err)
			}
			continue
		}
		if string(data) != want {
			return fmt.Errorf("recipes: semaphore %s: %s leases asked, but its node records %q: %w",
				sem.path, want, data, ErrLeasesMismatch)
		}
		close(sem.agreed)
		return nil
	}
}

// Lease is one of a semaphore's leases, held until Release or until it is
// lost with its session.
type Lease struct {
	core   lockCore
	leases int
}

// Release gives the lease back: it deletes the lease's node and reports
// success only once the server confirms it is gone. If ctx ends first the
// lease is still held and Release may be called again (a lost reply is
// read back first, as Lock.Unlock does). ErrNotHeld once released.
func (l *Lease) Release(ctx context.Context) error { return l.core.unlock(ctx) }

// Lost is closed when the lease ends: released, or lost (session expired
// or closed, node deleted by someone else, connection down longer than the
// WithLostAfterSuspended policy).
func (l *Lease) Lost() <-chan struct{} { return l.core.lostCh() }

// Err says why the lease ended: nil while held or after Release, an error
// wrapping ErrLost once lost.
func (l *Lease) Err() error { return l.core.err() }

// FencingToken is the creation zxid of the lease's node (0 once
// released): it increases from one lease granted to the next.
func (l *Lease) FencingToken() uint64 { return l.core.token() }

// Node is the lease node's full path, "" once released.
func (l *Lease) Node() string { return l.core.node() }

// acquire is steps 2 and 3 of the protocol, run while holding the lock.
func (l *Lease) acquire(ctx context.Context, try bool, tr *tracer) (acquired, error) {
	return l.core.acquireOnChildren(ctx, try, PrefixLease, tr, func(children []string, ours string) (found, granted bool) {
		// Every other child is a lease held (only the lock's holder waits),
		// so counting them all, as Curator does, is the rule; unknown
		// children only make it stricter.
		return slices.Contains(children, ours), len(children) <= l.leases
	})
}
