package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
)

// grantLog records, in grant order, what every holder saw inside its
// critical section. Appending happens while holding the lock under test,
// so the log's order is the grant order if the lock excludes.
type grantLog struct {
	inside   atomic.Int32
	overlaps atomic.Int32

	mu     sync.Mutex
	seqs   []int64
	tokens []uint64
}

// enter is the critical section: it counts overlaps and records the grant.
func (g *grantLog) enter(node string, token uint64) {
	if g.inside.Add(1) != 1 {
		g.overlaps.Add(1)
	}
	seq, _ := parseSeq(node)
	g.mu.Lock()
	g.seqs = append(g.seqs, seq)
	g.tokens = append(g.tokens, token)
	g.mu.Unlock()
	g.inside.Add(-1)
}

// TestLockContention is issue 3 item 1: 50 contenders, each its own
// session, 20 acquisitions each.
func TestLockContention(t *testing.T) {
	const contenders, rounds = 50, 20
	servers := sharedServers(t)
	path := testPath(t)
	sessions := newSessions(t, contenders, servers)
	ctx := testCtx(t, 90*time.Second)

	var (
		log   grantLog
		lists atomic.Int64
	)
	trace := &LockTrace{Request: func(op Op, _ time.Duration, _ error) {
		if op == OpGetChildren {
			lists.Add(1)
		}
	}}
	errs := make(chan result, contenders)
	for i, s := range sessions {
		go func() {
			l := NewLock(s, path, WithTrace(trace))
			for range rounds {
				if err := l.Lock(ctx); err != nil {
					errs <- result{i, fmt.Errorf("Lock: %w", err)}
					return
				}
				log.enter(l.Node(), l.FencingToken())
				if err := l.Unlock(ctx); err != nil {
					errs <- result{i, fmt.Errorf("Unlock: %w", err)}
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

	if n := log.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping critical sections, want 0", n)
	}
	if got, want := len(log.seqs), contenders*rounds; got != want {
		t.Errorf("%d grants, want %d", got, want)
	}
	// Every node created is granted (nobody gives up), and each contender
	// creates its next node after its release, so FIFO means the grant
	// log's sequence numbers, and tokens, strictly increase.
	for i := 1; i < len(log.seqs); i++ {
		if log.seqs[i] <= log.seqs[i-1] {
			t.Errorf("grant %d: node sequence %d after %d: not in creation order", i, log.seqs[i], log.seqs[i-1])
			break
		}
		if log.tokens[i] <= log.tokens[i-1] {
			t.Errorf("grant %d: fencing token %d after %d: not increasing", i, log.tokens[i], log.tokens[i-1])
			break
		}
	}
	if left := children(t, sessions[0], path); len(left) != 0 {
		t.Errorf("nodes left under %s: %q", path, left)
	}
	// Each grant needs the listing after its wake-up; the listing after the
	// create is saved when the predecessor can be named (Lock.acquire).
	perAcq := float64(lists.Load()) / float64(contenders*rounds)
	t.Logf("%.2f listings per acquisition", perAcq)
	if perAcq > 1.6 {
		t.Errorf("%.2f listings per acquisition, want about 1 (the enqueue listing is usually skipped)", perAcq)
	}
}

// TestLockCancelledWaiter is item 2.
func TestLockCancelledWaiter(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 3, servers)
	ctx := testCtx(t, 30*time.Second)

	holder, waiter, next := NewLock(ss[0], path), NewLock(ss[1], path), NewLock(ss[2], path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	waiterDone := make(chan error, 1)
	go func() { waiterDone <- waiter.Lock(waitCtx) }()
	waitFor(t, 10*time.Second, "the waiter's node", func() bool { return len(children(t, ss[0], path)) == 2 })
	nextDone := make(chan error, 1)
	go func() { nextDone <- next.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the next waiter's node", func() bool { return len(children(t, ss[0], path)) == 3 })

	cancel()
	if err := <-waiterDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock = %v, want %v", err, context.Canceled)
	}
	// Checked right after Lock returned: the node must already be gone.
	for _, name := range children(t, ss[0], path) {
		if owner := ownerOf(t, ss[0], joinPath(path, name)); owner == ss[1].ID() {
			t.Errorf("cancelled waiter's node %s still exists after Lock returned", name)
		}
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-nextDone; err != nil {
		t.Fatalf("next waiter's Lock = %v, want nil", err)
	}
	if err := next.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTryLock is item 3.
func TestTryLock(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 2, servers)
	ctx := testCtx(t, 30*time.Second)

	a, b := NewLock(ss[0], path), NewLock(ss[1], path)
	if err := a.TryLock(ctx); err != nil {
		t.Fatalf("TryLock on a free lock = %v, want nil", err)
	}
	// a never releases while b tries: waiting would hang until ctx ends.
	start := time.Now()
	err := b.TryLock(ctx)
	if !errors.Is(err, ErrHeldByOther) {
		t.Fatalf("TryLock on a held lock = %v, want %v", err, ErrHeldByOther)
	}
	t.Logf("TryLock on a held lock returned after %v", time.Since(start))
	if got := children(t, ss[0], path); len(got) != 1 {
		t.Errorf("children after a failed TryLock = %q, want only the holder's", got)
	}
	if err := b.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after a failed TryLock = %v, want %v", err, ErrNotHeld)
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.TryLock(ctx); err != nil {
		t.Errorf("TryLock after release = %v, want nil", err)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLockReentrant is item 4.
func TestLockReentrant(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 2, servers)
	ctx := testCtx(t, 30*time.Second)

	l, other := NewLock(ss[0], path), NewLock(ss[1], path)
	for i := range 2 {
		if err := l.Lock(ctx); err != nil {
			t.Fatalf("Lock #%d: %v", i+1, err)
		}
	}
	node, token := l.Node(), l.FencingToken()
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("first Unlock: %v", err)
	}
	if l.Node() != node || l.FencingToken() != token {
		t.Errorf("after 1 of 2 Unlocks: node %q token %d, want still %q %d", l.Node(), l.FencingToken(), node, token)
	}
	if err := other.TryLock(ctx); !errors.Is(err, ErrHeldByOther) {
		t.Errorf("other TryLock while count is 1 = %v, want %v", err, ErrHeldByOther)
	}
	select {
	case <-l.Lost():
		t.Errorf("Lost closed while still held")
	default:
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
	if l.Node() != "" {
		t.Errorf("Node() after release = %q, want \"\"", l.Node())
	}
	select {
	case <-l.Lost():
	default:
		t.Errorf("Lost not closed after release")
	}
	if err := l.Err(); err != nil {
		t.Errorf("Err() after a clean release = %v, want nil", err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("extra Unlock = %v, want %v", err, ErrNotHeld)
	}
	if got := children(t, ss[0], path); len(got) != 0 {
		t.Errorf("children after release = %q, want none", got)
	}

	t.Run("concurrent Lock on one value counts", func(t *testing.T) {
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = l.Lock(ctx) }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Lock %d: %v", i, err)
			}
		}
		if got := children(t, ss[0], path); len(got) != 1 {
			t.Errorf("children = %q, want exactly one node for one value", got)
		}
		for i := range n {
			if err := l.Unlock(ctx); err != nil {
				t.Fatalf("Unlock %d: %v", i, err)
			}
		}
		if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
			t.Errorf("extra Unlock = %v, want %v", err, ErrNotHeld)
		}
	})
}

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

// TestHerdLocksExclude is the first half of item 9.
func TestHerdLocksExclude(t *testing.T) {
	const contenders, rounds = 10, 10
	servers := sharedServers(t)
	ctx := testCtx(t, 60*time.Second)
	for _, tc := range []struct {
		name string
		make func(s *Session, path string) Locker
	}{
		{"herd", func(s *Session, path string) Locker { return NewHerdLock(s, path) }},
		{"herd children", func(s *Session, path string) Locker { return NewHerdChildrenLock(s, path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testPath(t)
			sessions := newSessions(t, contenders, servers)
			var log grantLog
			errs := make(chan result, contenders)
			for i, s := range sessions {
				go func() {
					l := tc.make(s, path)
					for range rounds {
						if err := l.Lock(ctx); err != nil {
							errs <- result{i, err}
							return
						}
						log.enter(l.Node(), l.FencingToken())
						if err := l.Unlock(ctx); err != nil {
							errs <- result{i, err}
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
			if n := log.overlaps.Load(); n != 0 {
				t.Errorf("%d overlapping critical sections, want 0", n)
			}
			if got := len(log.tokens); got != contenders*rounds {
				t.Errorf("%d grants, want %d", got, contenders*rounds)
			}
			for i := 1; i < len(log.tokens); i++ {
				if log.tokens[i] <= log.tokens[i-1] {
					t.Errorf("grant %d: token %d after %d", i, log.tokens[i], log.tokens[i-1])
					break
				}
			}
			if left := children(t, sessions[0], path); len(left) != 0 {
				t.Errorf("nodes left: %q", left)
			}
		})
	}
}

// TestWakeupsPerRelease is the second half of item 9: watch notifications
// per release, counted by the sessions (Session.WatchEvents), stay at one
// for the fair lock and grow with the number of waiters for both herd
// locks. A holder's own notifications about its own release (its node's
// watch, and for the children lock its directory watch) are not wake-ups:
// they are counted while it releases and taken out.
func TestWakeupsPerRelease(t *testing.T) {
	servers := sharedServers(t)
	ctx := testCtx(t, 90*time.Second)
	kinds := []struct {
		name string
		make func(s *Session, path string, opts ...LockOption) Locker
	}{
		{"fair", func(s *Session, path string, opts ...LockOption) Locker { return NewLock(s, path, opts...) }},
		{"herd", func(s *Session, path string, opts ...LockOption) Locker { return NewHerdLock(s, path, opts...) }},
		{"herd children", func(s *Session, path string, opts ...LockOption) Locker {
			return NewHerdChildrenLock(s, path, opts...)
		}},
	}
	perRelease := map[string]map[int]float64{}
	for _, kind := range kinds {
		perRelease[kind.name] = map[int]float64{}
		for _, waiters := range []int{4, 16} {
			got := measureWakeups(t, ctx, servers, kind.make, waiters)
			perRelease[kind.name][waiters] = got
			t.Logf("%-13s %2d waiters: %.2f wake-ups per release", kind.name, waiters, got)
		}
	}
	if t.Failed() {
		return
	}
	for _, w := range []int{4, 16} {
		if got := perRelease["fair"][w]; got < 0.9 || got > 1.1 {
			t.Errorf("fair lock, %d waiters: %.2f wake-ups per release, want about 1", w, got)
		}
	}
	for _, name := range []string{"herd", "herd children"} {
		small, large := perRelease[name][4], perRelease[name][16]
		// One release wakes every waiter still queued: (w+1)/2 per release
		// on average for w waiters, 2.5 and 8.5 here, somewhat less when a
		// waiter that lost a race has not re-armed its watch in time.
		if large < 2*small || large < 4 {
			t.Errorf("%s lock: %.2f wake-ups per release with 4 waiters, %.2f with 16: want growth with the waiters", name, small, large)
		}
	}
}

// measureWakeups has one holder release the lock to a queue of waiters,
// one at a time: each waiter, once granted, releases right away, and the
// count of releases is the number of waiters.
func measureWakeups(t *testing.T, ctx context.Context, servers []string, mk func(*Session, string, ...LockOption) Locker, waiters int) float64 {
	t.Helper()
	path := fmt.Sprintf("%s/%d", testPath(t), waiters)
	type member struct {
		s         *Session
		l         Locker
		releasing atomic.Bool
		own       atomic.Int64 // notifications received while releasing
		waiting   atomic.Int32 // 1 while blocked on a watch
	}
	ms := make([]*member, waiters+1)
	for i := range ms {
		m := &member{}
		m.s = newTestSession(t, servers, WithEventObserver(func(ev zk.Event) {
			if ev.Type != zk.EventSession && ev.Type != zk.EventNotWatching && m.releasing.Load() {
				m.own.Add(1)
			}
		}))
		m.l = mk(m.s, path, WithTrace(&LockTrace{
			Waiting: func(time.Time) { m.waiting.Store(1) },
			Woken:   func(time.Time) { m.waiting.Store(0) },
		}))
		ms[i] = m
	}
	release := func(m *member) error {
		m.releasing.Store(true)
		defer m.releasing.Store(false)
		return m.l.Unlock(ctx)
	}
	holder := ms[0]
	if err := holder.l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// All waiters queue up before the first release, so every release
	// happens with the remaining waiters waiting.
	done := make(chan result, waiters)
	for i, m := range ms[1:] {
		go func() {
			if err := m.l.Lock(ctx); err != nil {
				done <- result{i, err}
				return
			}
			done <- result{i, release(m)}
		}()
	}
	waitFor(t, 20*time.Second, "all waiters to wait", func() bool {
		n := 0
		for _, m := range ms[1:] {
			n += int(m.waiting.Load())
		}
		return n == waiters
	})
	base := make([]int64, len(ms))
	for i, m := range ms {
		base[i] = m.s.WatchEvents()
	}
	if err := release(holder); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		if r := <-done; r.err != nil {
			t.Errorf("waiter %d: %v", r.who, r.err)
		}
	}
	var events, own int64
	for i, m := range ms {
		events += m.s.WatchEvents() - base[i]
		own += m.own.Load()
	}
	// waiters+1 releases, of which the last wakes nobody.
	return float64(events-own) / float64(waiters)
}

// TestLockSpentContext: Lock refuses an ended ctx; Unlock still releases.
func TestLockSpentContext(t *testing.T) {
	s := newTestSession(t, sharedServers(t))
	path := testPath(t)
	ctx := testCtx(t, 30*time.Second)
	spent, cancel := context.WithCancel(ctx)
	cancel()

	l := NewLock(s, path)
	if err := l.Lock(spent); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock(ended ctx) = %v, want %v", err, context.Canceled)
	}
	if got := children(t, s, path); len(got) != 0 {
		t.Errorf("children after a refused Lock = %q, want none", got)
	}
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(spent); err != nil {
		t.Errorf("Unlock(ended ctx) = %v, want nil", err)
	}
	if got := children(t, s, path); len(got) != 0 {
		t.Errorf("children after Unlock(ended ctx) = %q, want none", got)
	}
}
