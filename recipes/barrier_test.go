package recipes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// stillWaiting fails the test for every done channel that has delivered:
// those calls returned while they should still block.
func stillWaiting(t *testing.T, done []chan error) {
	t.Helper()
	for i, ch := range done {
		select {
		case err := <-ch:
			t.Errorf("participant %d returned early (err %v)", i, err)
		default:
		}
	}
}

// waitAll waits for every done channel and fails the test for errors.
func waitAll(t *testing.T, ctx context.Context, done []chan error, what string) {
	t.Helper()
	for i, ch := range done {
		select {
		case err := <-ch:
			if err != nil {
				t.Errorf("participant %d: %s: %v", i, what, err)
			}
		case <-ctx.Done():
			t.Fatalf("participant %d: %s never returned", i, what)
		}
	}
}

// TestBarrier is issue 3 item 14, the barrier: 10 participants, each its own
// session; nobody passes before the tenth arrives, all pass when it does,
// and no node is left.
func TestBarrier(t *testing.T) {
	const n = 10
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, n, servers)
	ctx := testCtx(t, 60*time.Second)

	done := make([]chan error, n)
	arrive := func(i int) {
		done[i] = make(chan error, 1)
		go func() { done[i] <- NewBarrier(ss[i], path, n).Wait(ctx) }()
		waitFor(t, 10*time.Second, fmt.Sprintf("arrival %d", i+1), func() bool { return len(children(t, ss[0], path)) == i+1 })
	}
	for i := range n - 2 {
		arrive(i)
	}
	stillWaiting(t, done[:n-2])

	t.Run("a cancelled participant leaves no node", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		late := make(chan error, 1)
		go func() { late <- NewBarrier(newTestSession(t, servers), path, n).Wait(cctx) }()
		waitFor(t, 10*time.Second, "the cancelled one's arrival", func() bool { return len(children(t, ss[0], path)) == n-1 })
		cancel()
		if err := <-late; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Wait = %v, want %v", err, context.Canceled)
		}
		if got := len(children(t, ss[0], path)); got != n-2 {
			t.Errorf("%d nodes after the cancelled participant left, want %d", got, n-2)
		}
	})
	stillWaiting(t, done[:n-2])

	arrive(n - 2)
	stillWaiting(t, done[:n-1])
	done[n-1] = make(chan error, 1)
	go func() { done[n-1] <- NewBarrier(ss[n-1], path, n).Wait(ctx) }()
	waitAll(t, ctx, done, "Wait")
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// TestDoubleBarrier is item 14, the double barrier: Enter returns for all 10
// only once the tenth enters; Leave returns for all only once the last one
// leaves.
func TestDoubleBarrier(t *testing.T) {
	const n = 10
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, n, servers)
	ctx := testCtx(t, 60*time.Second)
	barriers := make([]*DoubleBarrier, n)
	for i := range barriers {
		barriers[i] = NewDoubleBarrier(ss[i], path, n)
	}
	if err := barriers[0].Leave(ctx); !errors.Is(err, ErrNotEntered) {
		t.Errorf("Leave before Enter = %v, want %v", err, ErrNotEntered)
	}

	run := func(op func(b *DoubleBarrier) error, who []int) []chan error {
		done := make([]chan error, len(who))
		for k, i := range who {
			done[k] = make(chan error, 1)
			go func() { done[k] <- op(barriers[i]) }()
		}
		return done
	}
	enter := func(b *DoubleBarrier) error { return b.Enter(ctx) }
	leave := func(b *DoubleBarrier) error { return b.Leave(ctx) }
	first, last := make([]int, n-1), []int{n - 1}
	for i := range first {
		first[i] = i
	}

	entering := run(enter, first)
	waitFor(t, 10*time.Second, "9 participants in", func() bool { return len(children(t, ss[0], path)) == n-1 })
	stillWaiting(t, entering)
	entering = append(entering, run(enter, last)...)
	waitAll(t, ctx, entering, "Enter")
	if err := barriers[0].Enter(ctx); err == nil {
		t.Errorf("second Enter = nil, want an error")
	}

	leaving := run(leave, first)
	// All but the lowest of the nine delete their nodes and wait; the
	// lowest of all keeps its node until everyone else is gone.
	waitFor(t, 10*time.Second, "the first leavers' nodes to go", func() bool {
		return len(participants(children(t, ss[0], path))) <= 2
	})
	stillWaiting(t, leaving)
	leaving = append(leaving, run(leave, last)...)
	waitAll(t, ctx, leaving, "Leave")
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}

	t.Run("the path serves another round", func(t *testing.T) {
		all := append(first, last...)
		waitAll(t, ctx, run(enter, all), "Enter")
		waitAll(t, ctx, run(leave, all), "Leave")
		if left := children(t, ss[0], path); len(left) != 0 {
			t.Errorf("nodes left: %q", left)
		}
	})
}

func TestBarrierInvalid(t *testing.T) {
	s := newTestSession(t, sharedServers(t))
	ctx := testCtx(t, 10*time.Second)
	tests := []struct {
		path string
		n    int
	}{
		{"/ok", 0},
		{"relative", 3},
		{"/trailing/", 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s n=%d", tt.path, tt.n), func(t *testing.T) {
			if err := NewBarrier(s, tt.path, tt.n).Wait(ctx); err == nil {
				t.Errorf("Barrier.Wait = nil, want an error")
			}
			if err := NewDoubleBarrier(s, tt.path, tt.n).Enter(ctx); err == nil {
				t.Errorf("DoubleBarrier.Enter = nil, want an error")
			}
		})
	}
}

// TestDoubleBarrierCancelRace cancels one of three participants at the
// moment the barrier opens, round after round. A participant whose Enter
// fails must not have been counted: the other two may not pass until a
// replacement arrives. One whose Enter succeeds was counted, even if its
// ctx ended meanwhile.
func TestDoubleBarrierCancelRace(t *testing.T) {
	const rounds = 60
	servers := sharedServers(t)
	base := testPath(t)
	ss := newSessions(t, 4, servers)
	ctx := testCtx(t, 120*time.Second)
	var gaveUp int
	for r := range rounds {
		path := fmt.Sprintf("%s/round-%d", base, r)
		bs := make([]*DoubleBarrier, 4)
		for i := range bs {
			bs[i] = NewDoubleBarrier(ss[i], path, 3)
		}
		// The one to cancel arrives first; the other two arrive while its
		// ctx runs out, somewhere between before and after the opening.
		cctx, cancel := context.WithCancel(ctx)
		first := make(chan error, 1)
		go func() { first <- bs[2].Enter(cctx) }()
		waitFor(t, 10*time.Second, "the first arrival", func() bool { return len(children(t, ss[0], path)) == 1 })
		steady := make([]chan error, 2)
		for i := range steady {
			ch := make(chan error, 1)
			steady[i] = ch
			go func() { ch <- bs[i].Enter(ctx) }()
		}
		time.Sleep(time.Duration(r%12) * 300 * time.Microsecond)
		cancel()
		err := <-first
		in := []*DoubleBarrier{bs[0], bs[1], bs[2]}
		if err != nil {
			gaveUp++
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("round %d: cancelled Enter = %v, want %v", r, err, context.Canceled)
			}
			for i, ch := range steady {
				select {
				case err := <-ch:
					t.Fatalf("round %d: participant %d passed (err %v) counting one that gave up", r, i, err)
				default:
				}
			}
			late := make(chan error, 1)
			go func() { late <- bs[3].Enter(ctx) }()
			steady = append(steady, late)
			in[2] = bs[3]
		}
		waitAll(t, ctx, steady, fmt.Sprintf("round %d: Enter", r))
		leaving := make([]chan error, len(in))
		for i, b := range in {
			leaving[i] = make(chan error, 1)
			ch := leaving[i]
			go func() { ch <- b.Leave(ctx) }()
		}
		waitAll(t, ctx, leaving, fmt.Sprintf("round %d: Leave", r))
		if left := children(t, ss[0], path); len(left) != 0 {
			t.Fatalf("round %d: nodes left: %q", r, left)
		}
	}
	t.Logf("%d rounds: the cancelled one gave up in %d, was counted in %d", rounds, gaveUp, rounds-gaveUp)
	if gaveUp == 0 || gaveUp == rounds {
		t.Errorf("gave up in %d of %d rounds: the cancellation never raced the opening", gaveUp, rounds)
	}
}
