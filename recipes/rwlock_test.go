package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitTarget(t *testing.T) {
	const (
		r1 = "_c_11111111-1111-1111-1111-111111111111-__READ__0000000001"
		w2 = "_c_22222222-2222-2222-2222-222222222222-__WRIT__0000000002"
		r3 = "_c_33333333-3333-3333-3333-333333333333-__READ__0000000003"
		w4 = "_c_44444444-4444-4444-4444-444444444444-__WRIT__0000000004"
		r5 = "_c_55555555-5555-5555-5555-555555555555-__READ__0000000005"
	)
	all := []string{r5, "garbage", w2, r1, w4, r3} // listing order is arbitrary
	reader := func(n Node) bool { return n.Kind != KindRead }
	tests := []struct {
		name      string
		children  []string
		ours      string
		blocks    func(Node) bool
		wantFound bool
		wantWait  string
	}{
		{"first reader holds", all, r1, reader, true, ""},
		{"reader waits for nearest writer", all, r3, reader, true, w2},
		{"reader skips readers back to writer", all, r5, reader, true, w4},
		{"writer waits for reader just before", all, w4, nil, true, r3},
		{"writer waits for first reader", all, w2, nil, true, r1},
		{"readers only: all hold", []string{r1, r3, r5}, r5, reader, true, ""},
		{"ours missing", []string{r1, w2}, r3, reader, false, w2},
		{"ours unparsable", all, "garbage", nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, wait := waitTarget(tt.children, tt.ours, tt.blocks)
			if found != tt.wantFound || wait != tt.wantWait {
				t.Errorf("waitTarget(%s) = %v, %q; want %v, %q", tt.ours, found, wait, tt.wantFound, tt.wantWait)
			}
		})
	}
}

// TestRWLockReadersShare is issue 3 item 10, first part: several readers,
// each its own session, hold the lock at once.
func TestRWLockReadersShare(t *testing.T) {
	const readers = 5
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, readers, servers)
	ctx := testCtx(t, 30*time.Second)

	locks := make([]*RWLocker, readers)
	for i, s := range ss {
		locks[i] = NewRWLock(s, path).ReadLock()
	}
	// Each Lock returns while the others still hold: no reader waits.
	for i, l := range locks {
		if err := l.Lock(ctx); err != nil {
			t.Fatalf("reader %d: Lock with %d readers inside: %v", i, i, err)
		}
	}
	if got := len(children(t, ss[0], path)); got != readers {
		t.Errorf("%d nodes with %d readers inside, want %d", got, readers, readers)
	}
	// A writer cannot get in; a further reader can.
	w := NewRWLock(newTestSession(t, servers), path).WriteLock()
	if err := w.TryLock(ctx); !errors.Is(err, ErrHeldByOther) {
		t.Errorf("writer TryLock with readers inside = %v, want %v", err, ErrHeldByOther)
	}
	r := NewRWLock(newTestSession(t, servers), path).ReadLock()
	if err := r.TryLock(ctx); err != nil {
		t.Errorf("reader TryLock with readers inside = %v, want nil", err)
	} else if err := r.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i, l := range locks {
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("reader %d: Unlock: %v", i, err)
		}
	}
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// TestRWLockWritersExclude is item 10, second part: under contention no
// reader or writer is ever inside together with a writer.
func TestRWLockWritersExclude(t *testing.T) {
	const writers, readers, rounds = 3, 6, 15
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, writers+readers, servers)
	ctx := testCtx(t, 90*time.Second)

	var (
		inReaders, inWriters atomic.Int32
		violations           atomic.Int32
		maxReaders           atomic.Int32
		lastToken            atomic.Uint64
		tokenErrs            atomic.Int32
	)
	errs := make(chan result, len(ss))
	for i, s := range ss {
		isWriter := i < writers
		go func() {
			rw := NewRWLock(s, path)
			l := rw.ReadLock()
			if isWriter {
				l = rw.WriteLock()
			}
			for range rounds {
				if err := l.Lock(ctx); err != nil {
					errs <- result{i, fmt.Errorf("Lock: %w", err)}
					return
				}
				if isWriter {
					if inWriters.Add(1) != 1 || inReaders.Load() != 0 {
						violations.Add(1)
					}
					// Writers follow each other in creation order.
					if tok := l.FencingToken(); tok <= lastToken.Load() {
						tokenErrs.Add(1)
					} else {
						lastToken.Store(tok)
					}
					inWriters.Add(-1)
				} else {
					n := inReaders.Add(1)
					if inWriters.Load() != 0 {
						violations.Add(1)
					}
					for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
					}
					work(t, s, path, 3)
					inReaders.Add(-1)
				}
				if err := l.Unlock(ctx); err != nil {
					errs <- result{i, fmt.Errorf("Unlock: %w", err)}
					return
				}
			}
			errs <- result{i, nil}
		}()
	}
	for range ss {
		if r := <-errs; r.err != nil {
			t.Errorf("contender %d: %v", r.who, r.err)
		}
	}
	if n := violations.Load(); n != 0 {
		t.Errorf("%d times a writer overlapped another holder, want 0", n)
	}
	if n := tokenErrs.Load(); n != 0 {
		t.Errorf("%d writer grants with a fencing token not above the previous writer's", n)
	}
	t.Logf("at most %d readers inside at once", maxReaders.Load())
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// work stands for a critical section's work: a few round trips to the
// servers, so that holders overlap when the recipe allows it.
func work(t testing.TB, s *Session, path string, trips int) {
	for range trips {
		if _, _, err := s.Conn().Exists(path); err != nil {
			t.Errorf("work: %v", err)
			return
		}
	}
}

// TestRWLockWakeups is item 10, third part: a reader's release wakes no
// reader, and a writer's release wakes only the readers it held back.
// Queue: r1 r2 (holding) w1 r3 r5 w2 r4, each its own session; the watch
// events delivered to each reader's session are counted at every step.
func TestRWLockWakeups(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 60*time.Second)
	names := []string{"r1", "r2", "w1", "r3", "r5", "w2", "r4"}
	ss := make(map[string]*Session)
	locks := make(map[string]*RWLocker)
	done := make(map[string]chan error)
	for i, name := range names {
		ss[name] = newTestSession(t, servers)
		rw := NewRWLock(ss[name], path)
		if name[0] == 'r' {
			locks[name] = rw.ReadLock()
		} else {
			locks[name] = rw.WriteLock()
		}
		done[name] = make(chan error, 1)
		go func() { done[name] <- locks[name].Lock(ctx) }()
		// One at a time, so that the queue's order is the order above.
		waitFor(t, 10*time.Second, name+"'s node", func() bool { return len(children(t, ss["r1"], path)) == i+1 })
	}
	events := func(name string) int64 { return ss[name].WatchEvents() }
	granted := func(name string) {
		t.Helper()
		select {
		case err := <-done[name]:
			if err != nil {
				t.Fatalf("%s: Lock: %v", name, err)
			}
		case <-ctx.Done():
			t.Fatalf("%s never got the lock", name)
		}
	}
	notGranted := func(name string) {
		t.Helper()
		select {
		case err := <-done[name]:
			t.Fatalf("%s got the lock (err %v) too early", name, err)
		default:
		}
	}
	unlock := func(name string) {
		t.Helper()
		if err := locks[name].Unlock(ctx); err != nil {
			t.Fatalf("%s: Unlock: %v", name, err)
		}
	}
	granted("r1")
	granted("r2")

	steps := []struct {
		release  string   // unlocked at this step
		grants   []string // acquire because of it
		waiting  []string // still waiting after it
		readers  []string // readers whose event count is checked
		wantWake []int64  // events each of them received during the step
	}{
		{"r1", nil, []string{"w1", "r3", "r5", "w2", "r4"}, []string{"r2", "r3", "r5", "r4"}, []int64{0, 0, 0, 0}},
		{"r2", []string{"w1"}, []string{"r3", "r5", "w2", "r4"}, []string{"r3", "r5", "r4"}, []int64{0, 0, 0}},
		{"w1", []string{"r3", "r5"}, []string{"w2", "r4"}, []string{"r3", "r5", "r4"}, []int64{1, 1, 0}},
		{"r3", nil, []string{"w2", "r4"}, []string{"r5", "r4"}, []int64{0, 0}},
		{"r5", []string{"w2"}, []string{"r4"}, []string{"r4"}, []int64{0}},
		{"w2", []string{"r4"}, nil, []string{"r4"}, []int64{1}},
	}
	for _, st := range steps {
		t.Run("release "+st.release, func(t *testing.T) {
			before := make([]int64, len(st.readers))
			for i, r := range st.readers {
				before[i] = events(r)
			}
			unlock(st.release)
			for _, g := range st.grants {
				granted(g)
			}
			// A notification the release caused is sent on each session's
			// connection before the reply to a later request: a round
			// trip on each makes sure any has arrived.
			for _, r := range st.readers {
				if _, err := ss[r].Conn().Sync(path); err != nil {
					t.Fatal(err)
				}
			}
			for _, w := range st.waiting {
				notGranted(w)
			}
			for i, r := range st.readers {
				if got := events(r) - before[i]; got != st.wantWake[i] {
					t.Errorf("%s received %d watch events when %s released, want %d", r, got, st.release, st.wantWake[i])
				}
			}
		})
	}
	unlock("r4")
	if left := children(t, ss["r1"], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

func TestRWLockDowngradeAndUpgrade(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 2, servers)
	ctx := testCtx(t, 30*time.Second)

	rw := NewRWLock(ss[0], path)
	other := NewRWLock(ss[1], path)
	if err := rw.WriteLock().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// Downgrade: the read side passes our own writer.
	if err := rw.ReadLock().TryLock(ctx); err != nil {
		t.Fatalf("read TryLock while holding the write side = %v, want nil", err)
	}
	if err := rw.WriteLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.ReadLock().TryLock(ctx); err != nil {
		t.Errorf("other reader after the downgrade = %v, want nil", err)
	} else if err := other.ReadLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.WriteLock().TryLock(ctx); !errors.Is(err, ErrHeldByOther) {
		t.Errorf("other writer after the downgrade = %v, want %v", err, ErrHeldByOther)
	}
	// Upgrade would wait for ourselves forever.
	if err := rw.WriteLock().Lock(ctx); !errors.Is(err, ErrLockUpgrade) {
		t.Errorf("write Lock while holding the read side = %v, want %v", err, ErrLockUpgrade)
	}
	if err := rw.ReadLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.ReadLock().Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("extra read Unlock = %v, want %v", err, ErrNotHeld)
	}
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

func TestRWLockCancelledReader(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 3, servers)
	ctx := testCtx(t, 30*time.Second)

	writer := NewRWLock(ss[0], path).WriteLock()
	if err := writer.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = NewRWLock(ss[i+1], path).ReadLock().Lock(waitCtx)
		}()
	}
	waitFor(t, 10*time.Second, "the readers' nodes", func() bool { return len(children(t, ss[0], path)) == 3 })
	cancel()
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("reader %d: cancelled Lock = %v, want %v", i, err, context.Canceled)
		}
	}
	if got := children(t, ss[0], path); len(got) != 1 {
		t.Errorf("children after the readers gave up = %q, want only the writer's", got)
	}
	if err := writer.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
