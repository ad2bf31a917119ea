package recipes

// Issue 21 bugs 6 to 9: what a release leaves when another client acted
// on our nodes, a reply too large for the receive buffer in every
// sequential recipe, and the semaphore's TryAcquire behind a contender
// that is busy acquiring.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestRWLockDowngradeReadNodeDeleted is issue 21 bug 6: after a downgrade
// behind another owner's queued writer, our write node is kept until the
// read side is released. When another client deleted our read node, the
// read side's release (which reports the loss) left the write node, and
// the queued writer waited for the life of our session.
func TestRWLockDowngradeReadNodeDeleted(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 3, servers)
	ctx := testCtx(t, 30*time.Second)
	rw := NewRWLock(ss[0], path)
	if err := rw.WriteLock().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	other := NewRWLock(ss[1], path).WriteLock()
	granted := make(chan error, 1)
	go func() { granted <- other.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the other writer's node", func() bool { return len(children(t, ss[2], path)) == 2 })
	if err := rw.ReadLock().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.WriteLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	// An operator deletes our read node.
	if err := ss[2].Conn().Delete(rw.ReadLock().Node(), -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the read side to learn of its loss", func() bool { return rw.ReadLock().Err() != nil })
	if err := rw.ReadLock().Unlock(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("read Unlock after our read node was deleted = %v, want an error wrapping %v", err, ErrLost)
	}
	grantCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	select {
	case err := <-granted:
		if err != nil {
			t.Fatalf("the other writer's Lock: %v", err)
		}
	case <-grantCtx.Done():
		t.Fatalf("the other writer was not granted after we released both sides: nodes %q", children(t, ss[2], path))
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if left := children(t, ss[2], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// TestHerdLockUnlockKeepsNextHolder is issue 21 bug 7: an operator deletes
// the herd lock holder's node, a waiter creates it and holds the lock;
// the old holder's Unlock, before it heard of the deletion (its session's
// notifications are delayed here), deleted the node by name, the new
// holder's, and returned nil. Now it deletes only its own node (the one
// created at its grant's zxid) and reports the lost grant.
func TestHerdLockUnlockKeepsNextHolder(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 30*time.Second)
	p := newProxy(t, servers[0])
	s1 := newTestSession(t, []string{p.Addr()})
	s2, s3 := newTestSession(t, servers), newTestSession(t, servers)
	l1, l2 := NewHerdLock(s1, path), NewHerdLock(s2, path)
	if err := l1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	granted := make(chan error, 1)
	go func() { granted <- l2.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the second contender to wait", func() bool { return l2.core.acquiring.Load() })
	// The old holder hears of what follows a second late.
	p.SetDelay(time.Second)
	node := joinPath(path, HerdNodeName)
	if err := s3.Conn().Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	if err := <-granted; err != nil {
		t.Fatalf("second Lock = %v", err)
	}
	err := l1.Unlock(ctx)
	if !errors.Is(err, ErrLost) {
		t.Errorf("old holder's Unlock after its node was deleted = %v, want an error wrapping %v", err, ErrLost)
	}
	if owner := ownerOf(t, s3, node); owner != s2.ID() {
		t.Fatalf("herd node owner after the old holder's Unlock = %x, want the new holder %x: it deleted the new holder's node", owner, s2.ID())
	}
	if err := l2.Unlock(ctx); err != nil {
		t.Errorf("new holder's Unlock = %v, want nil", err)
	}
}

// TestSequentialRecipesReplyTooLarge is issue 21 bug 8: the election and
// both sides of the read/write lock, behind a foreign predecessor whose
// data does not fit the session's receive buffer, reconnected about once
// a second until ctx ended. Every sequential recipe must fail at once
// with ErrReplyTooLarge, as the fair Lock does, and leave no node.
func TestSequentialRecipesReplyTooLarge(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		acquire    func(ctx context.Context, s *Session, dir string) error
	}{
		{"election", PrefixLatch, func(ctx context.Context, s *Session, dir string) error {
			return NewElection(s, dir).Campaign(ctx, []byte("candidate"))
		}},
		{"rwlock-write", PrefixWrite, func(ctx context.Context, s *Session, dir string) error {
			return NewRWLock(s, dir).WriteLock().Lock(ctx)
		}},
		{"rwlock-read", PrefixWrite, func(ctx context.Context, s *Session, dir string) error {
			return NewRWLock(s, dir).ReadLock().Lock(ctx)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers := sharedServers(t)
			dir := testPath(t)
			big := newTestSession(t, servers)
			if err := ensurePath(testCtx(t, 10*time.Second), big, dir); err != nil {
				t.Fatal(err)
			}
			if _, err := big.Conn().Create(dir+"/_c_6f1c2d3e-0000-4000-8000-000000000001-"+tc.kind, make([]byte, 16<<10),
				zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			s := newTestSession(t, servers, WithBufferSizes(4096, 4096), orderedDialer())
			ctx := testCtx(t, 20*time.Second)
			err := tc.acquire(ctx, s, dir)
			if !errors.Is(err, ErrReplyTooLarge) {
				t.Fatalf("behind a predecessor with 16 KiB of data on a 4 KiB session: %v, want ErrReplyTooLarge", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("returned only when its ctx ended: it retried instead of failing")
			}
			waitFor(t, 10*time.Second, "the contender's node removed", func() bool { return len(children(t, big, dir)) == 1 })
		})
	}
}

// TestSemaphoreTryAcquireBehindAcquiring is issue 21 bug 9: TryAcquire
// refused a free lease whenever another contender held the semaphore's
// mutex for a moment (taking a lease of its own). It must answer whether a
// lease is free: wait out a contender that is taking one, and say
// ErrHeldByOther only when none is free.
func TestSemaphoreTryAcquireBehindAcquiring(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 3, servers)
	ctx := testCtx(t, 30*time.Second)

	// A contender in the middle of acquiring: it holds the mutex.
	mutex := NewLock(ss[0], joinPath(path, SemaphoreLocks))
	if err := mutex.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	type got struct {
		l   *Lease
		err error
	}
	done := make(chan got, 1)
	go func() {
		l, err := NewSemaphore(ss[1], path, 2).TryAcquire(ctx)
		done <- got{l, err}
	}()
	var r got
	returned := false
	waitFor(t, 10*time.Second, "TryAcquire to queue for the mutex", func() bool {
		select {
		case r = <-done:
			returned = true
			return true
		default:
		}
		return len(children(t, ss[2], joinPath(path, SemaphoreLocks))) == 2
	})
	if err := mutex.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !returned {
		r = <-done
	}
	if r.err != nil {
		t.Fatalf("TryAcquire with 2 leases free while another contender held the mutex = %v, want a lease", r.err)
	}

	// All leases out and a contender waiting for one (holding the mutex):
	// TryAcquire says at once that none is free.
	second, err := NewSemaphore(ss[2], path, 2).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	waitCtx, cancel := context.WithCancel(ctx)
	go func() {
		_, err := NewSemaphore(ss[0], path, 2).Acquire(waitCtx)
		waiting <- err
	}()
	waitFor(t, 10*time.Second, "a contender waiting for a lease", func() bool {
		return len(children(t, ss[2], joinPath(path, SemaphoreLeases))) == 3
	})
	tryCtx, tryCancel := context.WithTimeout(ctx, 5*time.Second)
	defer tryCancel()
	if _, err := NewSemaphore(ss[1], path, 2).TryAcquire(tryCtx); !errors.Is(err, ErrHeldByOther) || tryCtx.Err() != nil {
		t.Errorf("TryAcquire with no lease free = %v (ctx %v), want %v at once", err, tryCtx.Err(), ErrHeldByOther)
	}
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Acquire = %v", err)
	}
	for _, l := range []*Lease{r.l, second} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{SemaphoreLocks, SemaphoreLeases} {
		if left := children(t, ss[2], joinPath(path, dir)); len(left) != 0 {
			t.Errorf("nodes left in %s: %q", dir, left)
		}
	}
}
