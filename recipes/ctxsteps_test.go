package recipes

// Every recipe call, with ctx ending at each of its steps (issue 21): the
// call's k-th write (create, delete, setData, multi) reaches the server
// and is carried out, its reply is lost with the connection, and the
// session's reconnection is held back until the call's ctx has ended;
// then the session may reconnect. For k = 1, 2, ... until the call makes
// fewer than k writes, the call's
// result must match what ZooKeeper holds afterwards: an error means
// nothing was left (no node, item or claim) or, for a release, that the
// thing is still held and can be released again; nil means done.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkherd/zkherd/faultproxy"
)

// stepRun is one run of a call under test: prepare (may be nil) sets the
// state up without faults, call is the call whose requests are cut, check
// compares its error with what the observer session reads.
type stepRun struct {
	prepare func(ctx context.Context) error
	call    func(ctx context.Context) error
	check   func(ctx context.Context, err error)
}

// stepCase builds a run on path for the session under test s (through
// the proxy), with obs a direct session for the checks.
type stepCase struct {
	name string
	new  func(t *testing.T, path string, s, obs *Session) stepRun
}

// isWrite reports the requests whose lost reply leaves an outcome
// unknown: the writes. (A read whose reply is lost is asked again; a ctx
// that ends meanwhile leaves nothing, as the recipes' cancel tests show.)
func isWrite(op int32) bool {
	switch op {
	case faultproxy.OpDelete, faultproxy.OpSetData, faultproxy.OpMulti, faultproxy.OpCheck:
		return true
	}
	return faultproxy.IsCreate(op)
}

// maxSteps bounds the writes a call under test makes.
const maxSteps = 40

// runSteps runs tc once per step, cutting the step-th write of the
// session under test, until the call ends before its step-th write. It
// returns the opcodes cut, one per step, and fails when the call made no
// write at all: a case that cuts nothing checks nothing.
func runSteps(t *testing.T, tc stepCase) (cut []int32) {
	servers := sharedServers(t)
	p := newProxy(t, servers[0])
	obs := newTestSession(t, servers)
	base := freshPath(t)
	for step := 1; step <= maxSteps; step++ {
		path := fmt.Sprintf("%s/%d", base, step)
		// The proxy twice: go-zookeeper waits a second before it tries
		// the first server of its list again, not the next one.
		s := newTestSession(t, []string{p.Addr(), p.Addr()}, orderedDialer())
		withoutOwnerAuth(s)
		ctx := testCtx(t, 30*time.Second)
		run := tc.new(t, path, s, obs)
		if run.prepare != nil {
			if err := run.prepare(ctx); err != nil {
				t.Fatalf("step %d: prepare: %v", step, err)
			}
		}
		arrived, release := p.HoldReconnects(s.ID())
		var seen atomic.Int32
		var fired atomic.Int32 // the opcode cut; 0: none
		p.OnRequest(func(r faultproxy.Request) faultproxy.Action {
			if r.Session != s.ID() || !isWrite(r.Op) || seen.Add(1) != int32(step) {
				return faultproxy.Forward
			}
			fired.Store(r.Op)
			return faultproxy.CutAfter
		})
		callCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- run.call(callCtx) }()
		var err error
		select {
		case err = <-done:
		case <-arrived:
			cancel()
			release()
			err = <-done
		}
		cancel()
		release()
		p.OnRequest(nil)
		op := fired.Load()
		if op == 0 {
			t.Logf("step %d (no write left to cut): %v", step, err)
		} else {
			t.Logf("step %d (opcode %d cut): %v", step, op, err)
		}
		run.check(ctx, err)
		s.Close()
		if op == 0 {
			if len(cut) == 0 {
				t.Fatalf("the call made no write: nothing was cut")
			}
			return cut // the call made fewer writes: every one was cut once
		}
		cut = append(cut, op)
	}
	t.Fatalf("the call made more than %d writes", maxSteps)
	return nil
}

// freshPath is testPath(t) made unique to this run: a -count rerun would
// find the last run's queue items there.
func freshPath(t *testing.T) string {
	return fmt.Sprintf("%s/%x", testPath(t), time.Now().UnixNano())
}

// left lists dir's children (none when dir is absent), for the checks.
func left(t *testing.T, obs *Session, dir string) []string {
	t.Helper()
	return children(t, obs, dir)
}

// wantEmpty fails unless dir has no children.
func wantEmpty(t *testing.T, obs *Session, dir, after string) {
	t.Helper()
	if names := left(t, obs, dir); len(names) != 0 {
		t.Errorf("after %s: nodes left in %s: %q", after, dir, names)
	}
}

// wantExists fails unless path exists.
func wantExists(t *testing.T, obs *Session, path, why string) {
	t.Helper()
	ok, _, err := obs.Conn().Exists(path)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Errorf("%s: %s does not exist", why, path)
	}
}

// lockSteps are the cases of a Locker: acquire, and release.
func lockSteps(name string, mk func(s *Session, path string) Locker) []stepCase {
	return []stepCase{
		{name + "/acquire", func(t *testing.T, path string, s, obs *Session) stepRun {
			l := mk(s, path)
			return stepRun{
				call: l.Lock,
				check: func(ctx context.Context, err error) {
					if err == nil {
						wantExists(t, obs, l.Node(), "Lock returned nil")
						if err := l.Unlock(ctx); err != nil {
							t.Errorf("Unlock after Lock: %v", err)
						}
					} else if l.Node() != "" {
						t.Errorf("Lock = %v, but Node is %s", err, l.Node())
					}
					wantEmpty(t, obs, path, "Lock = "+fmt.Sprint(err))
				},
			}
		}},
		{name + "/release", func(t *testing.T, path string, s, obs *Session) stepRun {
			l := mk(s, path)
			var node string
			return stepRun{
				prepare: func(ctx context.Context) error {
					err := l.Lock(ctx)
					node = l.Node()
					return err
				},
				call: l.Unlock,
				check: func(ctx context.Context, err error) {
					if err != nil {
						// Told still held: the node is there, and a second
						// Unlock releases it. (With the outcome unknown, it
						// may be gone; the second Unlock says.)
						if !errors.Is(err, ErrOutcomeUnknown) {
							wantExists(t, obs, node, fmt.Sprintf("Unlock = %v", err))
						}
						if err := l.Unlock(ctx); err != nil {
							t.Errorf("second Unlock: %v", err)
						}
					}
					wantEmpty(t, obs, path, "Unlock = "+fmt.Sprint(err))
				},
			}
		}},
	}
}

// releaseWhenWaiting runs release once waiting is closed (the call under
// test waits behind a holder) or ctx has ended, and closes the returned
// channel after it.
func releaseWhenWaiting(ctx context.Context, waiting <-chan struct{}, release func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer release()
		select {
		case <-waiting:
		case <-ctx.Done():
		}
	}()
	return done
}

// waitingTrace returns a trace whose Waiting closes the channel (once).
func waitingTrace() (*LockTrace, <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return &LockTrace{Waiting: func(time.Time) { once.Do(func() { close(ch) }) }}, ch
}

// queuedLockSteps is the acquire case of a Locker that waits behind
// another session's holder, released once the call waits for it.
func queuedLockSteps(name string, mk func(s *Session, path string, opts ...LockOption) Locker) stepCase {
	return stepCase{name + "/acquire-queued", func(t *testing.T, path string, s, obs *Session) stepRun {
		trace, waiting := waitingTrace()
		l, holder := mk(s, path, WithTrace(trace)), mk(obs, path)
		return stepRun{
			prepare: holder.Lock,
			call: func(ctx context.Context) error {
				released := releaseWhenWaiting(ctx, waiting, func() {
					if err := holder.Unlock(context.Background()); err != nil {
						t.Errorf("holder's Unlock: %v", err)
					}
				})
				err := l.Lock(ctx)
				<-released
				return err
			},
			check: func(ctx context.Context, err error) {
				if err == nil {
					wantExists(t, obs, l.Node(), "Lock returned nil")
					if err := l.Unlock(ctx); err != nil {
						t.Errorf("Unlock after Lock: %v", err)
					}
				} else if l.Node() != "" {
					t.Errorf("Lock = %v, but Node is %s", err, l.Node())
				}
				wantEmpty(t, obs, path, "Lock = "+fmt.Sprint(err))
			},
		}
	}}
}

// whenChildren returns a channel closed once dir has n children (polled:
// no event says that another session's contender has queued).
func whenChildren(ctx context.Context, obs *Session, dir string, n int) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if names, _, err := obs.Conn().Children(dir); err == nil && len(names) >= n {
				close(ch)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return ch
}

func TestCtxEndsAtEveryStepLocks(t *testing.T) {
	var cases []stepCase
	cases = append(cases, queuedLockSteps("lock", func(s *Session, path string, opts ...LockOption) Locker { return NewLock(s, path, opts...) }))
	cases = append(cases, queuedLockSteps("rwlock-write", func(s *Session, path string, opts ...LockOption) Locker {
		return NewRWLock(s, path, opts...).WriteLock()
	}))
	cases = append(cases, lockSteps("herd-children-lock", func(s *Session, path string) Locker { return NewHerdChildrenLock(s, path) })...)
	cases = append(cases, lockSteps("lock", func(s *Session, path string) Locker { return NewLock(s, path) })...)
	cases = append(cases, lockSteps("herd-lock", func(s *Session, path string) Locker { return NewHerdLock(s, path) })...)
	cases = append(cases, lockSteps("rwlock-read", func(s *Session, path string) Locker { return NewRWLock(s, path).ReadLock() })...)
	cases = append(cases, lockSteps("rwlock-write", func(s *Session, path string) Locker { return NewRWLock(s, path).WriteLock() })...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc) })
	}
}

func TestCtxEndsAtEveryStepElectionSemaphore(t *testing.T) {
	for _, tc := range []stepCase{
		{"campaign", func(t *testing.T, path string, s, obs *Session) stepRun {
			e := NewElection(s, path)
			return stepRun{
				call: func(ctx context.Context) error { return e.Campaign(ctx, []byte("v")) },
				check: func(ctx context.Context, err error) {
					if err == nil {
						if !e.IsLeader() {
							t.Errorf("Campaign = nil, but not leader")
						}
						if err := e.Resign(ctx); err != nil {
							t.Errorf("Resign: %v", err)
						}
					} else if e.IsLeader() {
						t.Errorf("Campaign = %v, but leader", err)
					}
					wantEmpty(t, obs, path, "Campaign = "+fmt.Sprint(err))
				},
			}
		}},
		{"resign", func(t *testing.T, path string, s, obs *Session) stepRun {
			e := NewElection(s, path)
			var node string
			return stepRun{
				prepare: func(ctx context.Context) error {
					err := e.Campaign(ctx, []byte("v"))
					node = e.Node()
					return err
				},
				call: e.Resign,
				check: func(ctx context.Context, err error) {
					if err != nil {
						if !errors.Is(err, ErrOutcomeUnknown) {
							wantExists(t, obs, node, fmt.Sprintf("Resign = %v", err))
						}
						if err := e.Resign(ctx); err != nil {
							t.Errorf("second Resign: %v", err)
						}
					}
					wantEmpty(t, obs, path, "Resign = "+fmt.Sprint(err))
				},
			}
		}},
		{"acquire-lease", func(t *testing.T, path string, s, obs *Session) stepRun {
			sem := NewSemaphore(s, path, 2)
			var lease *Lease
			return stepRun{
				call: func(ctx context.Context) (err error) {
					lease, err = sem.Acquire(ctx)
					return err
				},
				check: func(ctx context.Context, err error) {
					if err == nil {
						wantExists(t, obs, lease.Node(), "Acquire returned nil")
						if err := lease.Release(ctx); err != nil {
							t.Errorf("Release: %v", err)
						}
					}
					for _, dir := range []string{SemaphoreLocks, SemaphoreLeases} {
						wantEmpty(t, obs, joinPath(path, dir), "Acquire = "+fmt.Sprint(err))
					}
				},
			}
		}},
		{"try-acquire-lease-behind-acquiring", func(t *testing.T, path string, s, obs *Session) stepRun {
			sem := NewSemaphore(s, path, 2)
			mutex := NewLock(obs, joinPath(path, SemaphoreLocks))
			var lease *Lease
			return stepRun{
				prepare: func(ctx context.Context) error {
					if err := sem.agree(ctx); err != nil {
						return err
					}
					return mutex.Lock(ctx)
				},
				call: func(ctx context.Context) (err error) {
					released := releaseWhenWaiting(ctx, whenChildren(ctx, obs, joinPath(path, SemaphoreLocks), 2), func() {
						if err := mutex.Unlock(context.Background()); err != nil {
							t.Errorf("mutex Unlock: %v", err)
						}
					})
					lease, err = sem.TryAcquire(ctx)
					<-released
					return err
				},
				check: func(ctx context.Context, err error) {
					if err == nil {
						wantExists(t, obs, lease.Node(), "TryAcquire returned nil")
						if err := lease.Release(ctx); err != nil {
							t.Errorf("Release: %v", err)
						}
					} else if errors.Is(err, ErrHeldByOther) {
						t.Errorf("TryAcquire = %v with both leases free", err)
					}
					for _, dir := range []string{SemaphoreLocks, SemaphoreLeases} {
						wantEmpty(t, obs, joinPath(path, dir), "TryAcquire = "+fmt.Sprint(err))
					}
				},
			}
		}},
		{"release-lease", func(t *testing.T, path string, s, obs *Session) stepRun {
			sem := NewSemaphore(s, path, 2)
			var (
				lease *Lease
				node  string
			)
			return stepRun{
				prepare: func(ctx context.Context) (err error) {
					lease, err = sem.Acquire(ctx)
					if err == nil {
						node = lease.Node()
					}
					return err
				},
				call: func(ctx context.Context) error { return lease.Release(ctx) },
				check: func(ctx context.Context, err error) {
					if err != nil {
						if !errors.Is(err, ErrOutcomeUnknown) {
							wantExists(t, obs, node, fmt.Sprintf("Release = %v", err))
						}
						if err := lease.Release(ctx); err != nil {
							t.Errorf("second Release: %v", err)
						}
					}
					for _, dir := range []string{SemaphoreLocks, SemaphoreLeases} {
						wantEmpty(t, obs, joinPath(path, dir), "Release = "+fmt.Sprint(err))
					}
				},
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc) })
	}
}

// queueState reads a queue's items and claims.
func queueState(t *testing.T, obs *Session, path string) (items, claims []string) {
	t.Helper()
	for _, name := range left(t, obs, path) {
		if strings.HasSuffix(name, ClaimSuffix) {
			claims = append(claims, name)
		} else {
			items = append(items, name)
		}
	}
	return items, claims
}

// wantQueue fails unless the queue holds nItems items and nClaims claims.
func wantQueue(t *testing.T, obs *Session, path string, nItems, nClaims int, after string) {
	t.Helper()
	items, claims := queueState(t, obs, path)
	if len(items) != nItems || len(claims) != nClaims {
		t.Errorf("after %s: items %q and claims %q, want %d and %d", after, items, claims, nItems, nClaims)
	}
}

func TestCtxEndsAtEveryStepQueue(t *testing.T) {
	putOne := func(ctx context.Context, obs *Session, path string) error {
		_, err := NewQueue(obs, path).Put(ctx, []byte("item"))
		return err
	}
	// Each part names the write it exists to cut, counted below: a part
	// whose call never had that write cut would check nothing.
	for _, tc := range []struct {
		stepCase
		cuts    func(op int32) bool
		cutName string
	}{
		{stepCase{"put", func(t *testing.T, path string, s, obs *Session) stepRun {
			q := NewQueue(s, path)
			return stepRun{
				call: func(ctx context.Context) error { _, err := q.Put(ctx, []byte("item")); return err },
				check: func(ctx context.Context, err error) {
					if err == nil {
						wantQueue(t, obs, path, 1, 0, "Put = nil")
					} else {
						wantTold(t, s, "Put", err)
						wantQueue(t, obs, path, 0, 0, fmt.Sprintf("Put = %v", err))
					}
				},
			}
		}}, faultproxy.IsCreate, "the item's create"},
		{stepCase{"take", func(t *testing.T, path string, s, obs *Session) stepRun {
			q := NewQueue(s, path)
			var data []byte
			return stepRun{
				prepare: func(ctx context.Context) error { return putOne(ctx, obs, path) },
				call: func(ctx context.Context) (err error) {
					data, err = q.Take(ctx)
					return err
				},
				check: func(ctx context.Context, err error) {
					switch {
					case err == nil && string(data) != "item":
						t.Errorf("Take = %q, nil; want the item", data)
					case err == nil:
						wantQueue(t, obs, path, 0, 0, "Take = item")
					default:
						wantTold(t, s, "Take", err)
						wantQueue(t, obs, path, 1, 0, fmt.Sprintf("Take = %v", err))
					}
				},
			}
		}}, isOp(faultproxy.OpDelete), "the item's delete"},
		{stepCase{"claim", func(t *testing.T, path string, s, obs *Session) stepRun {
			q := NewQueue(s, path)
			var c *Claim
			return stepRun{
				prepare: func(ctx context.Context) error { return putOne(ctx, obs, path) },
				call: func(ctx context.Context) (err error) {
					c, err = q.Claim(ctx)
					return err
				},
				check: func(ctx context.Context, err error) {
					if err != nil {
						// Told not claimed: the item is back, unclaimed.
						wantTold(t, s, "Claim", err)
						wantQueue(t, obs, path, 1, 0, fmt.Sprintf("Claim = %v", err))
						return
					}
					if string(c.Data) != "item" {
						t.Errorf("Claim = %q, nil; want the item", c.Data)
					}
					wantQueue(t, obs, path, 1, 1, "Claim = nil")
					if err := c.Ack(ctx); err != nil {
						t.Errorf("Ack: %v", err)
					}
					wantQueue(t, obs, path, 0, 0, "Ack")
				},
			}
		}}, faultproxy.IsCreate, "the claim's create"},
		{stepCase{"ack", func(t *testing.T, path string, s, obs *Session) stepRun {
			q := NewQueue(s, path)
			var c *Claim
			return stepRun{
				prepare: func(ctx context.Context) (err error) {
					if err := putOne(ctx, obs, path); err != nil {
						return err
					}
					c, err = q.Claim(ctx)
					return err
				},
				call: func(ctx context.Context) error { return c.Ack(ctx) },
				check: func(ctx context.Context, err error) {
					if err != nil {
						// Told not acknowledged: still claimed, Ack again.
						// (Told unknown: the second Ack finds out.)
						wantTold(t, s, "Ack", err)
						if !errors.Is(err, ErrOutcomeUnknown) {
							wantQueue(t, obs, path, 1, 1, fmt.Sprintf("Ack = %v", err))
						}
						if err := c.Ack(ctx); err != nil {
							t.Errorf("second Ack: %v", err)
						}
					}
					wantQueue(t, obs, path, 0, 0, "Ack = "+fmt.Sprint(err))
				},
			}
		}}, isOp(faultproxy.OpMulti), "the Ack's multi"},
		{stepCase{"release-claim", func(t *testing.T, path string, s, obs *Session) stepRun {
			q := NewQueue(s, path)
			var c *Claim
			return stepRun{
				prepare: func(ctx context.Context) (err error) {
					if err := putOne(ctx, obs, path); err != nil {
						return err
					}
					c, err = q.Claim(ctx)
					return err
				},
				call: func(ctx context.Context) error { return c.Release(ctx) },
				check: func(ctx context.Context, err error) {
					if err != nil {
						// Told still held: the claim is there; Release again.
						wantTold(t, s, "Release", err)
						if !errors.Is(err, ErrOutcomeUnknown) {
							wantQueue(t, obs, path, 1, 1, fmt.Sprintf("Release = %v", err))
						}
						if err := c.Release(ctx); err != nil {
							t.Errorf("second Release: %v", err)
						}
					}
					wantQueue(t, obs, path, 1, 0, "Release = "+fmt.Sprint(err))
				},
			}
		}}, isOp(faultproxy.OpDelete), "the claim's delete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for _, op := range runSteps(t, tc.stepCase) {
				if tc.cuts(op) {
					n++
				}
			}
			t.Logf("%s cut %d times", tc.cutName, n)
			if n == 0 {
				t.Errorf("%s was never cut: the part checks nothing", tc.cutName)
			}
		})
	}
}

// isOp returns a test for opcode op.
func isOp(op int32) func(int32) bool {
	return func(o int32) bool { return o == op }
}

// wantTold fails unless a call's error is one its recipe documents for a
// ctx that ended mid-call on a live session: ctx's error (not done) or
// ErrOutcomeUnknown. ErrLost means the claim went with the session or
// another client removed it; neither happens here while s lives.
func wantTold(t *testing.T, s *Session, call string, err error) {
	t.Helper()
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrOutcomeUnknown):
	case errors.Is(err, ErrLost) && s.alive() != nil:
	default:
		t.Errorf("%s = %v: not ctx's error, ErrOutcomeUnknown, or ErrLost with the session ended", call, err)
	}
}

func TestCtxEndsAtEveryStepBarriers(t *testing.T) {
	for _, tc := range []stepCase{
		{"wait", func(t *testing.T, path string, s, obs *Session) stepRun {
			b := NewBarrier(s, path, 1)
			return stepRun{
				call: b.Wait,
				check: func(ctx context.Context, err error) {
					wantEmpty(t, obs, path, "Wait = "+fmt.Sprint(err))
				},
			}
		}},
		{"enter", func(t *testing.T, path string, s, obs *Session) stepRun {
			b := NewDoubleBarrier(s, path, 1)
			return stepRun{
				call: b.Enter,
				check: func(ctx context.Context, err error) {
					if err == nil {
						if names := left(t, obs, path); !slices.Contains(names, BarrierReady) || len(names) != 2 {
							t.Errorf("Enter = nil, but the barrier holds %q", names)
						}
						if err := b.Leave(ctx); err != nil {
							t.Errorf("Leave: %v", err)
						}
					}
					wantEmpty(t, obs, path, "Enter = "+fmt.Sprint(err))
				},
			}
		}},
		{"leave", func(t *testing.T, path string, s, obs *Session) stepRun {
			b := NewDoubleBarrier(s, path, 1)
			return stepRun{
				prepare: b.Enter,
				call:    b.Leave,
				check: func(ctx context.Context, err error) {
					if err != nil {
						if errors.Is(err, ErrNotEntered) {
							t.Errorf("Leave = %v", err)
						}
						if err := b.Leave(ctx); err != nil {
							t.Errorf("second Leave: %v", err)
						}
					}
					wantEmpty(t, obs, path, "Leave = "+fmt.Sprint(err))
				},
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc) })
	}
}
