package recipes

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
)

// TestLockHolderExpires is item 5: the holder is partitioned away (its
// proxy swallows all traffic) until the servers expire its session.
func TestLockHolderExpires(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	p := newProxy(t, servers[0])
	const timeout = 2 * time.Second
	holderS := newTestSession(t, []string{p.Addr()}, WithSessionTimeout(timeout))
	waiterS := newTestSession(t, servers)
	ctx := testCtx(t, 60*time.Second)

	holder, waiter := NewLock(holderS, path), NewLock(waiterS, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	oldToken := holder.FencingToken()
	waiterDone := make(chan error, 1)
	go func() { waiterDone <- waiter.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the waiter's node", func() bool { return len(children(t, waiterS, path)) == 2 })

	p.SetDropping(true)
	select {
	case <-holder.Lost():
	case <-ctx.Done():
		t.Fatalf("holder's Lost not closed after its session was partitioned")
	}
	if err := holder.Err(); !errors.Is(err, ErrLost) {
		t.Errorf("holder.Err() = %v, want %v", err, ErrLost)
	}
	if err := <-waiterDone; err != nil {
		t.Fatalf("waiter's Lock = %v, want nil", err)
	}
	if newToken := waiter.FencingToken(); newToken <= oldToken {
		t.Errorf("new holder's fencing token %d, want > old holder's %d", newToken, oldToken)
	}

	// Heal the partition: the old holder learns its session expired.
	p.SetDropping(false)
	select {
	case <-holderS.Done():
	case <-ctx.Done():
		t.Fatalf("holder's session not ended after the partition healed")
	}
	if err := holderS.Err(); !errors.Is(err, ErrSessionExpired) {
		t.Errorf("holder session Err() = %v, want %v", err, ErrSessionExpired)
	}
	if err := holder.Unlock(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("Unlock of a lost lock = %v, want an error wrapping %v", err, ErrLost)
	}
	if err := holder.Lock(ctx); !errors.Is(err, ErrSessionExpired) {
		t.Errorf("Lock on an expired session = %v, want %v", err, ErrSessionExpired)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLockLostPolicy checks WithLostAfterSuspended(0): Lost closes as soon
// as the connection drops, though the session lives on.
func TestLockLostPolicy(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	p := newProxy(t, servers[0])
	s := newTestSession(t, []string{p.Addr()})
	ctx := testCtx(t, 30*time.Second)

	l := NewLock(s, path, WithLostAfterSuspended(0))
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	p.CutAll()
	select {
	case <-l.Lost():
	case <-ctx.Done():
		t.Fatal("Lost not closed after the connection dropped")
	}
	if err := l.Err(); !errors.Is(err, ErrLost) {
		t.Errorf("Err() = %v, want %v", err, ErrLost)
	}
	// The session survived, so the node is still there until Unlock.
	if err := l.Unlock(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("Unlock = %v, want an error wrapping %v", err, ErrLost)
	}
	if got := children(t, s, path); len(got) != 0 {
		t.Errorf("children after Unlock = %q, want none", got)
	}
}

// TestLockNodeDeletedByOther: an administrator deletes the holder's node.
func TestLockNodeDeletedByOther(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 2, servers)
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct {
		name string
		l    Locker
	}{
		{"fair", NewLock(ss[0], path+"/fair")},
		{"herd", NewHerdLock(ss[0], path+"/herd")},
		{"herd children", NewHerdChildrenLock(ss[0], path+"/children")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ss[1].Conn().Delete(tc.l.Node(), -1); err != nil {
				t.Fatal(err)
			}
			select {
			case <-tc.l.Lost():
			case <-ctx.Done():
				t.Fatal("Lost not closed after the node was deleted")
			}
			if err := tc.l.Unlock(ctx); !errors.Is(err, ErrLost) {
				t.Errorf("Unlock = %v, want an error wrapping %v", err, ErrLost)
			}
		})
	}
}

// TestLockCreateConnectionLoss is item 6: the connection drops right after
// each contender's create request reached the server.
func TestLockCreateConnectionLoss(t *testing.T) {
	const contenders = 5
	servers := sharedServers(t)
	path := testPath(t)
	direct := newTestSession(t, servers)
	ctx := testCtx(t, 60*time.Second)
	if err := ensurePath(ctx, direct, path); err != nil {
		t.Fatal(err)
	}
	blocker := NewLock(direct, path)
	if err := blocker.Lock(ctx); err != nil {
		t.Fatal(err)
	}

	type contender struct {
		s       *Session
		l       *Lock
		creates atomic.Int32
		waiting atomic.Bool
		cut     <-chan struct{}
	}
	cs := make([]*contender, contenders)
	done := make(chan result, contenders)
	for i := range cs {
		c := &contender{}
		p := newProxy(t, servers[0])
		c.s = newTestSession(t, []string{p.Addr()})
		c.cut = p.CutAfter(faultproxy.OpCreate, 1)
		c.l = NewLock(c.s, path, WithTrace(&LockTrace{
			Request: func(op Op, _ time.Duration, _ error) {
				if op == OpCreate {
					c.creates.Add(1)
				}
			},
			Waiting: func(time.Time) { c.waiting.Store(true) },
		}))
		cs[i] = c
		go func() {
			if err := c.l.Lock(ctx); err != nil {
				done <- result{i, err}
				return
			}
			done <- result{i, c.l.Unlock(ctx)}
		}()
	}
	for i, c := range cs {
		<-c.cut
		waitFor(t, 20*time.Second, fmt.Sprintf("contender %d to wait", i), func() bool { return c.waiting.Load() })
	}
	owners := map[int64]int{}
	for _, name := range children(t, direct, path) {
		owners[ownerOf(t, direct, joinPath(path, name))]++
	}
	for i, c := range cs {
		if got := owners[c.s.ID()]; got != 1 {
			t.Errorf("contender %d owns %d nodes, want exactly 1", i, got)
		}
		if got := c.creates.Load(); got != 1 {
			t.Errorf("contender %d sent %d creates, want 1 (its node was found, not re-created)", i, got)
		}
	}
	if err := blocker.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for range contenders {
		if r := <-done; r.err != nil {
			t.Errorf("contender %d: %v", r.who, r.err)
		}
	}
	// And the lock keeps working through the same proxies.
	for i, c := range cs {
		if err := c.l.Lock(ctx); err != nil {
			t.Fatalf("contender %d Lock after recovery: %v", i, err)
		}
		if err := c.l.Unlock(ctx); err != nil {
			t.Fatalf("contender %d Unlock after recovery: %v", i, err)
		}
	}
	if left := children(t, direct, path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// TestLockReleaseConnectionLoss is item 7: the connection drops during the
// release, after the delete reached the server or before.
func TestLockReleaseConnectionLoss(t *testing.T) {
	servers := sharedServers(t)
	ctx := testCtx(t, 60*time.Second)
	for _, tc := range []struct {
		name string
		cut  func(p *faultproxy.Proxy) <-chan struct{}
		// deletes: after a lost reply the release reads its node back
		// (synced) and deletes again only if it is still there.
		deletes int32
	}{
		// A holder's release is one multi (mark and delete; see Lock.acquire).
		{"after the delete was sent", func(p *faultproxy.Proxy) <-chan struct{} { return p.CutAfter(faultproxy.OpMulti, 1) }, 1},
		{"before the delete was sent", func(p *faultproxy.Proxy) <-chan struct{} { return p.CutBefore(faultproxy.OpMulti, 1) }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testPath(t)
			p := newProxy(t, servers[0])
			s := newTestSession(t, []string{p.Addr()})
			waiterS := newTestSession(t, servers)
			var deletes atomic.Int32
			l := NewLock(s, path, WithTrace(&LockTrace{Request: func(op Op, _ time.Duration, _ error) {
				if op == OpDelete {
					deletes.Add(1)
				}
			}}))
			waiter := NewLock(waiterS, path)
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			waiterDone := make(chan error, 1)
			go func() { waiterDone <- waiter.Lock(ctx) }()
			waitFor(t, 10*time.Second, "the waiter's node", func() bool { return len(children(t, waiterS, path)) == 2 })

			cut := tc.cut(p)
			if err := l.Unlock(ctx); err != nil {
				t.Fatalf("Unlock across a connection loss = %v, want nil", err)
			}
			select {
			case <-cut:
			case <-ctx.Done():
				t.Fatal("the release's request never came by the proxy")
			}
			if got := deletes.Load(); got != tc.deletes {
				t.Errorf("%d delete requests, want %d", got, tc.deletes)
			}
			if err := <-waiterDone; err != nil {
				t.Fatalf("waiter's Lock = %v", err)
			}
			for _, name := range children(t, waiterS, path) {
				if owner := ownerOf(t, waiterS, joinPath(path, name)); owner == s.ID() {
					t.Errorf("orphan node %s of the released holder", name)
				}
			}
			if err := waiter.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLockLeaderKilled is item 8: SIGKILL of the leader of a 3-node
// ensemble while 20 contenders cycle.
func TestLockLeaderKilled(t *testing.T) {
	const contenders, after = 20, 5
	ens := enstest.Start(t, 3)
	path := testPath(t)
	sessions := newSessions(t, contenders, ens.Servers())
	ctx := testCtx(t, 120*time.Second)

	var (
		log       grantLog
		total     atomic.Int64
		killed    atomic.Bool
		sinceKill = make([]atomic.Int64, contenders)
		stop      = make(chan struct{})
	)
	errs := make(chan result, contenders)
	for i, s := range sessions {
		go func() {
			l := NewLock(s, path)
			for {
				select {
				case <-stop:
					errs <- result{i, nil}
					return
				default:
				}
				if err := l.Lock(ctx); err != nil {
					errs <- result{i, fmt.Errorf("Lock: %w", err)}
					return
				}
				log.enter(l.Node(), l.FencingToken())
				total.Add(1)
				if killed.Load() {
					sinceKill[i].Add(1)
				}
				if err := l.Unlock(ctx); err != nil {
					errs <- result{i, fmt.Errorf("Unlock: %w", err)}
					return
				}
			}
		}()
	}
	finish := func() {
		close(stop)
		for range contenders {
			if r := <-errs; r.err != nil {
				t.Errorf("contender %d: %v", r.who, r.err)
			}
		}
	}

	waitFor(t, 30*time.Second, "100 acquisitions before the kill", func() bool { return total.Load() >= 100 })
	leader, err := ens.Leader(ctx)
	if err != nil {
		finish()
		t.Fatal(err)
	}
	if err := ens.Kill(leader); err != nil {
		finish()
		t.Fatal(err)
	}
	killed.Store(true)
	before := total.Load()
	t.Logf("killed leader %d after %d acquisitions", leader, before)
	waitFor(t, 60*time.Second, fmt.Sprintf("every contender to acquire %d times after the kill", after), func() bool {
		for i := range sinceKill {
			if sinceKill[i].Load() < after {
				return false
			}
		}
		return true
	})
	finish()
	t.Logf("%d acquisitions in all", total.Load())
	if n := log.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping critical sections, want 0", n)
	}
	for i := 1; i < len(log.tokens); i++ {
		if log.tokens[i] <= log.tokens[i-1] {
			t.Errorf("grant %d: fencing token %d after %d: not increasing", i, log.tokens[i], log.tokens[i-1])
			break
		}
	}
}
