package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestSemaphoreLimit is issue 3 item 11, first part: never more than N
// holders under contention, each contender its own session.
func TestSemaphoreLimit(t *testing.T) {
	const leases, contenders, rounds = 3, 8, 6
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, contenders, servers)
	ctx := testCtx(t, 90*time.Second)

	// N leases go out at once, without waiting.
	first := make([]*Lease, leases)
	for i := range first {
		l, err := NewSemaphore(ss[i], path, leases).TryAcquire(ctx)
		if err != nil {
			t.Fatalf("TryAcquire #%d of %d free leases: %v", i+1, leases, err)
		}
		first[i] = l
	}
	if _, err := NewSemaphore(ss[leases], path, leases).TryAcquire(ctx); !errors.Is(err, ErrHeldByOther) {
		t.Fatalf("TryAcquire with all leases out = %v, want %v", err, ErrHeldByOther)
	}
	for _, l := range first {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var inside, most, over atomic.Int32
	errs := make(chan result, contenders)
	for i, s := range ss {
		go func() {
			sem := NewSemaphore(s, path, leases)
			for range rounds {
				l, err := sem.Acquire(ctx)
				if err != nil {
					errs <- result{i, fmt.Errorf("Acquire: %w", err)}
					return
				}
				n := inside.Add(1)
				if n > leases {
					over.Add(1)
				}
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				work(t, s, path, 30)
				inside.Add(-1)
				if err := l.Release(ctx); err != nil {
					errs <- result{i, fmt.Errorf("Release: %w", err)}
					return
				}
			}
			errs <- result{i, nil}
		}()
	}
	for range contenders {
		if r := <-errs; r.err != nil {
			t.Errorf("contender %d: %v", r.who, r.err)
		}
	}
	if n := over.Load(); n != 0 {
		t.Errorf("%d times more than %d holders, want 0", n, leases)
	}
	t.Logf("at most %d holders at once", most.Load())
	for _, dir := range []string{SemaphoreLeases, SemaphoreLocks} {
		if left := children(t, ss[0], joinPath(path, dir)); len(left) != 0 {
			t.Errorf("nodes left in %s: %q", dir, left)
		}
	}
}

// TestSemaphoreHolderSessionEnds is item 11, second part: a holder's lease
// returns to the pool when its session ends, closed by its owner or expired
// by the servers, and the waiter gets it.
func TestSemaphoreHolderSessionEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(t *testing.T, holder *Session, cut func())
	}{
		{"closed", func(t *testing.T, holder *Session, _ func()) { holder.Close() }},
		{"expired", func(t *testing.T, _ *Session, cut func()) { cut() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers := sharedServers(t)
			path := testPath(t)
			p := newProxy(t, servers[0])
			holderS := newTestSession(t, []string{p.Addr()}, WithSessionTimeout(2*time.Second))
			ss := newSessions(t, 2, servers)
			ctx := testCtx(t, 60*time.Second)

			const leases = 2
			held, err := NewSemaphore(holderS, path, leases).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			other, err := NewSemaphore(ss[0], path, leases).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			waiterDone := make(chan error, 1)
			var waiterLease *Lease
			go func() {
				l, err := NewSemaphore(ss[1], path, leases).Acquire(ctx)
				waiterLease = l
				waiterDone <- err
			}()
			leasesDir := joinPath(path, SemaphoreLeases)
			waitFor(t, 10*time.Second, "the waiter's lease node", func() bool { return len(children(t, ss[0], leasesDir)) == 3 })
			select {
			case err := <-waiterDone:
				t.Fatalf("waiter's Acquire returned (%v) with both leases out", err)
			default:
			}

			tt.end(t, holderS, func() { p.SetDropping(true) })
			select {
			case <-held.Lost():
			case <-ctx.Done():
				t.Fatal("holder's Lost not closed after its session ended")
			}
			if err := held.Err(); !errors.Is(err, ErrLost) {
				t.Errorf("holder's Err() = %v, want %v", err, ErrLost)
			}
			select {
			case err := <-waiterDone:
				if err != nil {
					t.Fatalf("waiter's Acquire = %v, want nil", err)
				}
			case <-ctx.Done():
				t.Fatal("waiter never got the freed lease")
			}
			if got := len(children(t, ss[0], leasesDir)); got != leases {
				t.Errorf("%d lease nodes, want %d", got, leases)
			}
			for _, l := range []*Lease{other, waiterLease} {
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			p.SetDropping(false)
		})
	}
}

func TestSemaphoreLeasesMismatch(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 2, servers)
	ctx := testCtx(t, 30*time.Second)

	l, err := NewSemaphore(ss[0], path, 3).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	tests := []struct {
		name   string
		leases int
		want   error
	}{
		{"same number", 3, nil},
		{"other number", 4, ErrLeasesMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewSemaphore(ss[1], path, tt.leases).Acquire(ctx)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Acquire with %d leases = %v, want %v", tt.leases, err, tt.want)
			}
			if got != nil {
				if err := got.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if _, err := NewSemaphore(ss[1], path, 0).Acquire(ctx); err == nil {
		t.Errorf("Acquire with 0 leases = nil, want an error")
	}
}

func TestSemaphoreCancelledWaiter(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 3, servers)
	ctx := testCtx(t, 30*time.Second)

	holder, err := NewSemaphore(ss[0], path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	waiterDone := make(chan error, 1)
	go func() {
		_, err := NewSemaphore(ss[1], path, 1).Acquire(waitCtx)
		waiterDone <- err
	}()
	leasesDir := joinPath(path, SemaphoreLeases)
	waitFor(t, 10*time.Second, "the waiter's lease node", func() bool { return len(children(t, ss[0], leasesDir)) == 2 })
	nextDone := make(chan error, 1)
	var next *Lease
	go func() {
		l, err := NewSemaphore(ss[2], path, 1).Acquire(ctx)
		next = l
		nextDone <- err
	}()
	waitFor(t, 10*time.Second, "the next waiter's lock node", func() bool {
		return len(children(t, ss[0], joinPath(path, SemaphoreLocks))) == 2
	})

	cancel()
	if err := <-waiterDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v, want %v", err, context.Canceled)
	}
	// Once the cancelled waiter is gone, the next one queues for a lease.
	waitFor(t, 10*time.Second, "the next waiter's lease node", func() bool { return len(children(t, ss[0], leasesDir)) == 2 })
	for _, dir := range []string{leasesDir, joinPath(path, SemaphoreLocks)} {
		for _, name := range children(t, ss[0], dir) {
			if ownerOf(t, ss[0], joinPath(dir, name)) == ss[1].ID() {
				t.Errorf("cancelled waiter's node %s/%s still exists", dir, name)
			}
		}
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-nextDone; err != nil {
		t.Fatalf("next waiter's Acquire = %v, want nil", err)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := next.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("second Release = %v, want %v", err, ErrNotHeld)
	}
}
