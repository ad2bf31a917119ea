package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestElection is issue 3 item 13: 10 candidates, each its own session;
// the leader resigns, then the next leader's session expires. Never two
// leaders at once: each sets a flag when its Campaign returns and clears
// it when its term ends (Lost, or just before Resign). An observer on its
// own session sees every change of leader.
func TestElection(t *testing.T) {
	const candidates = 10
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 90*time.Second)
	campaignCtx, withdraw := context.WithCancel(ctx)
	defer withdraw()

	// Candidate 1 is the second leader, whose session expires: its
	// connection goes through a proxy that can swallow everything. It
	// gives its term up at the first sign of trouble (WithLostAfterSuspended(0)),
	// which comes after 2/3 of the session timeout without a reply, before
	// the servers expire the session after a whole timeout.
	const expiring = 1
	p := newProxy(t, servers[0])
	ss := make([]*Session, candidates)
	for i := range ss {
		if i == expiring {
			ss[i] = newTestSession(t, []string{p.Addr()}, WithSessionTimeout(2*time.Second))
		} else {
			ss[i] = newTestSession(t, servers)
		}
	}
	observer := NewElection(newTestSession(t, servers), path)
	changes := observer.Observe(ctx)
	next := func(what string) Leader {
		t.Helper()
		select {
		case l, ok := <-changes:
			if !ok {
				t.Fatalf("observer's channel closed while waiting for %s", what)
			}
			return l
		case <-ctx.Done():
			t.Fatalf("observer saw no change while waiting for %s", what)
		}
		return Leader{}
	}
	if l := next("the initial state"); l.Node != "" {
		t.Fatalf("observer's first value = %+v, want no leader yet", l)
	}

	var leading, overlaps atomic.Int32
	elections := make([]*Election, candidates)
	elected := make(chan int, candidates)
	resign := make([]chan struct{}, candidates)
	ended := make(chan result, candidates)
	for i := range candidates {
		e := NewElection(ss[i], path, WithLostAfterSuspended(0))
		elections[i], resign[i] = e, make(chan struct{})
		go func() {
			if err := e.Campaign(campaignCtx, fmt.Appendf(nil, "candidate %d", i)); err != nil {
				ended <- result{i, fmt.Errorf("Campaign: %w", err)}
				return
			}
			if leading.Add(1) != 1 {
				overlaps.Add(1)
			}
			elected <- i
			select {
			case <-e.Lost():
				leading.Add(-1)
				ended <- result{i, fmt.Errorf("lost: %w", e.Err())}
			case <-resign[i]:
				leading.Add(-1)
				ended <- result{i, e.Resign(ctx)}
			}
		}()
		// One at a time: candidate i is i-th in line.
		waitFor(t, 10*time.Second, fmt.Sprintf("candidate %d's node", i), func() bool { return len(children(t, ss[0], path)) == i+1 })
	}

	steps := []struct {
		name       string
		act        func(t *testing.T)
		wantEnd    int   // candidate whose term ends
		wantEndErr error // how it ends
		wantLeader int   // candidate leading afterwards
	}{
		{"first leader", func(*testing.T) {}, -1, nil, 0},
		{"leader resigns", func(*testing.T) { close(resign[0]) }, 0, nil, 1},
		{"leader's session expires", func(*testing.T) { p.SetDropping(true) }, expiring, ErrLost, 2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.act(t)
			if st.wantEnd >= 0 {
				r := <-ended
				if r.who != st.wantEnd || !errors.Is(r.err, st.wantEndErr) {
					t.Fatalf("term ended: candidate %d with %v; want candidate %d with %v", r.who, r.err, st.wantEnd, st.wantEndErr)
				}
			}
			select {
			case i := <-elected:
				if i != st.wantLeader {
					t.Fatalf("candidate %d elected, want %d", i, st.wantLeader)
				}
			case <-ctx.Done():
				t.Fatalf("nobody elected; want candidate %d", st.wantLeader)
			}
			want := fmt.Sprintf("candidate %d", st.wantLeader)
			if l := next(want); string(l.Value) != want || l.Session != ss[st.wantLeader].ID() {
				t.Errorf("observer saw %q (session 0x%x), want %q (0x%x)", l.Value, l.Session, want, ss[st.wantLeader].ID())
			}
			// Any session can ask; the answer agrees with the observer's.
			l, err := NewElection(ss[candidates-1], path).Leader(ctx)
			if err != nil || string(l.Value) != want {
				t.Errorf("Leader() = %q, %v; want %q", l.Value, err, want)
			}
			if !elections[st.wantLeader].IsLeader() || l.Token != elections[st.wantLeader].FencingToken() {
				t.Errorf("leader's IsLeader %v, token %d; want true, %d", elections[st.wantLeader].IsLeader(),
					elections[st.wantLeader].FencingToken(), l.Token)
			}
		})
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d times two candidates led at once", n)
	}

	// The rest withdraw; their nodes go before Campaign returns.
	withdraw()
	for range candidates - 3 {
		if r := <-ended; !errors.Is(r.err, context.Canceled) {
			t.Errorf("candidate %d: withdrawn Campaign = %v, want %v", r.who, r.err, context.Canceled)
		}
	}
	close(resign[2])
	if r := <-ended; r.who != 2 || r.err != nil {
		t.Errorf("candidate %d resigned with %v; want candidate 2, nil", r.who, r.err)
	}
	if l := next("no leader"); l.Node != "" {
		t.Errorf("observer after everyone left: %+v, want no leader", l)
	}
	if _, err := observer.Leader(ctx); !errors.Is(err, ErrNoLeader) {
		t.Errorf("Leader() with no candidates = %v, want %v", err, ErrNoLeader)
	}
	p.SetDropping(false)
}

func TestElectionCampaignTwice(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 30*time.Second)
	e := NewElection(newTestSession(t, servers), path)
	if err := e.Campaign(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := e.Campaign(ctx, []byte("a")); !errors.Is(err, ErrAlreadyLeader) {
		t.Errorf("second Campaign = %v, want %v", err, ErrAlreadyLeader)
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Resign(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("second Resign = %v, want %v", err, ErrNotHeld)
	}
	// A new term after resigning.
	if err := e.Campaign(ctx, []byte("b")); err != nil {
		t.Fatalf("Campaign after Resign = %v", err)
	}
	if l, err := e.Leader(ctx); err != nil || string(l.Value) != "b" {
		t.Errorf("Leader() = %q, %v; want %q", l.Value, err, "b")
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}
