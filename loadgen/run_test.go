package loadgen

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// shortRun returns the first run of built-in scenario name, cut down to
// clients clients for d.
func shortRun(t *testing.T, name string, clients int, d time.Duration) scenarios.Run {
	t.Helper()
	spec, ok := scenarios.Builtin(name)
	if !ok {
		t.Fatalf("no built-in scenario %q", name)
	}
	spec.Clients = clients
	spec.Duration, spec.Ops = d, 0
	spec.RampUp = 0
	if spec.Locks > clients {
		spec.Locks = clients
	}
	if spec.Queue != nil {
		q := *spec.Queue
		q.Producers, q.Consumers, q.Items = clients/2, clients-clients/2, 0
		spec.Queue = &q
	}
	if spec.Barrier != nil {
		b := *spec.Barrier
		b.Size = clients / 2
		spec.Barrier = &b
	}
	if err := spec.Validate(); err != nil {
		t.Fatalf("scenario %s cut down: %v", name, err)
	}
	return spec.Runs()[0]
}

// assertNamespaceGone checks that the run left nothing on the server.
func assertNamespaceGone(t *testing.T, ens *ensemble.Ensemble, ns string) {
	t.Helper()
	s, err := recipes.NewSession(context.Background(), ens.Servers())
	if err != nil {
		t.Fatalf("session to check the namespace: %v", err)
	}
	defer s.Close()
	ok, _, err := s.Conn().Exists(ns)
	if err != nil {
		t.Fatalf("exists %s: %v", ns, err)
	}
	if ok {
		t.Errorf("namespace %s still exists after the run", ns)
	}
	children, _, err := s.Conn().Children(Root)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("children %s: %v", Root, err)
	}
	if len(children) > 0 {
		t.Errorf("%s still has children %v", Root, children)
	}
}

func TestBuiltinScenarios(t *testing.T) {
	ens := enstest.Start(t, 1)
	tests := []struct {
		name     string
		clients  int
		phase    metrics.Phase
		minOps   int64
		checkMax bool // herd measures expected
	}{
		{name: "fair-lock", clients: 10, phase: metrics.Acquire, minOps: 20},
		{name: "herd-lock", clients: 10, phase: metrics.Acquire, minOps: 5},
		{name: "herd-children", clients: 10, phase: metrics.Acquire, minOps: 5},
		{name: "rwlock-mix", clients: 10, phase: metrics.Acquire, minOps: 20},
		{name: "semaphore", clients: 10, phase: metrics.Acquire, minOps: 20},
		{name: "election-churn", clients: 6, phase: metrics.Acquire, minOps: 3},
		{name: "barrier", clients: 6, phase: metrics.BarrierWait, minOps: 5},
		{name: "queue", clients: 6, phase: metrics.EndToEnd, minOps: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := shortRun(t, tt.name, tt.clients, 1500*time.Millisecond)
			res, err := Run(context.Background(), run, Options{Servers: ens.Servers()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !res.Checks.Passed {
				t.Errorf("checks failed: %v", res.Checks.Violations)
			}
			if res.Partial {
				t.Errorf("Partial = true, want false")
			}
			if res.Ops < tt.minOps {
				t.Errorf("Ops = %d, want at least %d", res.Ops, tt.minOps)
			}
			if got := res.Metrics.Summary(tt.phase).Count; got == 0 {
				t.Errorf("phase %s has no values; phases: %v", tt.phase, res.Metrics.Phases)
			}
			if res.MntrError != "" {
				t.Errorf("mntr: %s", res.MntrError)
			}
			if res.Checks.LeftoverZnodes != 0 {
				t.Errorf("LeftoverZnodes = %d (%v), want 0", res.Checks.LeftoverZnodes, res.Checks.LeftoverPaths)
			}
			if l := res.Linearizability; l == nil || l.Result != oracle.ResultOK || l.Checked < tt.minOps || l.Partitions == 0 {
				t.Errorf("linearizability %+v, want ok with at least %d operations checked", l, tt.minOps)
			}
			assertHistoryReadable(t, res.History)
			if got := res.Metrics.Counts.Errors; got != 0 {
				t.Errorf("errors = %d %v, want 0", got, res.Metrics.Counts.ErrorsByKind)
			}
			assertNamespaceGone(t, ens, res.Namespace)
		})
	}
}

// brokenLock excludes nobody: Lock returns at once.
type brokenLock struct {
	token uint64
	lost  chan struct{}
}

func (l *brokenLock) Lock(context.Context) error    { return nil }
func (l *brokenLock) TryLock(context.Context) error { return nil }
func (l *brokenLock) Unlock(context.Context) error  { return nil }
func (l *brokenLock) Lost() <-chan struct{}         { return l.lost }
func (l *brokenLock) FencingToken() uint64          { return l.token }
func (l *brokenLock) Node() string                  { return "" }

func TestBrokenLockFailsMutualExclusion(t *testing.T) {
	ens := enstest.Start(t, 1)
	run := shortRun(t, "fair-lock", 8, time.Second)
	run.Hold = scenarios.FixedHold(5 * time.Millisecond)
	res, err := Run(context.Background(), run, Options{
		Servers: ens.Servers(),
		NewLocker: func(*recipes.Session, string) recipes.Locker {
			return &brokenLock{token: 1, lost: make(chan struct{})}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Checks.Passed {
		t.Errorf("Checks.Passed = true with a lock that excludes nobody, want false")
	}
	if res.Checks.MutualExclusionViolations == 0 {
		t.Errorf("MutualExclusionViolations = 0, want > 0")
	}
	if res.Checks.FencingViolations == 0 {
		t.Errorf("FencingViolations = 0 with a constant token, want > 0")
	}
	if l := res.Linearizability; l == nil || l.Result != oracle.ResultViolation || l.Violation == nil || len(l.Violation.HTML) == 0 {
		t.Errorf("linearizability %+v, want a violation drawn", l)
	}
	found := false
	for _, v := range res.Checks.Violations {
		if strings.HasPrefix(v, "mutual exclusion:") {
			found = true
		}
	}
	if !found {
		t.Errorf("Violations %q lack a mutual exclusion line", res.Checks.Violations)
	}
}

func TestCancelLeavesNothingBehind(t *testing.T) {
	ens := enstest.Start(t, 1)
	run := shortRun(t, "fair-lock", 20, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ns string
	res, err := Run(ctx, run, Options{
		Servers: ens.Servers(),
		Progress: func(p Progress) {
			if p.Ops > 20 {
				cancel()
			}
		},
		Interval: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	ns = res.Namespace
	if !res.Partial {
		t.Errorf("Partial = false after cancel, want true")
	}
	if !res.Checks.Passed {
		t.Errorf("checks failed: %v", res.Checks.Violations)
	}
	if res.Ops == 0 {
		t.Errorf("Ops = 0, want some before the cancel")
	}
	if d := res.Stop.Sub(res.WindowStart); d > 30*time.Second {
		t.Errorf("window lasted %v, want the cancel to cut it short", d)
	}
	assertNamespaceGone(t, ens, ns)
}

// assertHistoryReadable checks that a run's history.jsonl is a well-formed
// history (each client's operations one at a time) that reads back whole.
func assertHistoryReadable(t *testing.T, h *oracle.History) {
	t.Helper()
	var b bytes.Buffer
	if err := h.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	back, err := oracle.ReadJSONL(&b)
	if err != nil {
		t.Fatalf("history.jsonl does not read back: %v", err)
	}
	if len(back.Ops) != len(h.Ops) {
		t.Errorf("history.jsonl reads back %d operations, %d written", len(back.Ops), len(h.Ops))
	}
}

// overlappingLock grants at once, with a fresh token each time, and closes
// its grant's Lost() on Unlock, as the recipes' locks do.
type overlappingLock struct {
	next *atomic.Uint64
	tok  uint64
	lost chan struct{}
}

func (l *overlappingLock) Lock(context.Context) error {
	l.tok, l.lost = l.next.Add(1), make(chan struct{})
	return nil
}
func (l *overlappingLock) TryLock(ctx context.Context) error { return l.Lock(ctx) }
func (l *overlappingLock) Unlock(context.Context) error      { close(l.lost); return nil }
func (l *overlappingLock) Lost() <-chan struct{}             { return l.lost }
func (l *overlappingLock) FencingToken() uint64              { return l.tok }
func (l *overlappingLock) Node() string                      { return "" }

// TestOracleSeesOverlapOfCleanReleases: two holders at once, each told
// nothing (Unlock returns nil), must be a mutex violation in the history.
// It was not: a lock's Lost() closes when Unlock releases the grant, and
// the release was recorded as lost (callable from the grant on) whenever
// Lost() was closed after it, so every release was, and any overlap
// linearized.
func TestOracleSeesOverlapOfCleanReleases(t *testing.T) {
	ens := enstest.Start(t, 1)
	run := shortRun(t, "fair-lock", 8, time.Second)
	run.Hold = scenarios.FixedHold(5 * time.Millisecond)
	var next atomic.Uint64
	res, err := Run(context.Background(), run, Options{
		Servers: ens.Servers(),
		NewLocker: func(*recipes.Session, string) recipes.Locker {
			return &overlappingLock{next: &next}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	lostReleases := 0
	for _, op := range res.History.Ops {
		if op.Kind == oracle.Release && op.Outcome == oracle.Lost {
			lostReleases++
		}
	}
	if lostReleases > 0 {
		t.Errorf("%d releases recorded as lost; no grant was lost", lostReleases)
	}
	if l := res.Linearizability; l == nil || l.Result != oracle.ResultViolation {
		t.Errorf("linearizability %+v, want a violation: holders overlapped", l)
	}
}
