package distrib

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// shortSpec is built-in scenario name, cut to clients per process and d.
func shortSpec(t *testing.T, name string, clients int, d time.Duration, edit func(*scenarios.Spec)) scenarios.Run {
	t.Helper()
	spec, ok := scenarios.Builtin(name)
	if !ok {
		t.Fatalf("no built-in scenario %s", name)
	}
	spec.Clients, spec.Duration = clients, d
	if spec.Queue != nil {
		spec.Queue.Producers, spec.Queue.Consumers = clients/2, clients-clients/2
	}
	if edit != nil {
		edit(&spec)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec.Runs()[0]
}

// runProcesses runs run as a distributed run of n members in this test
// process (each its own sessions), the starter with starterOpts, and
// returns every member's outcome.
func runProcesses(t *testing.T, id string, n int, servers []string, run scenarios.Run, starterOpts, opts loadgen.Options) []Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	starter, err := Start(ctx, session(t, servers), "", Plan{RunID: id, Processes: n, Title: run.Name, Runs: []scenarios.Run{run}})
	if err != nil {
		t.Fatal(err)
	}
	members := []*Member{starter}
	for range n - 1 {
		m, err := Join(ctx, session(t, servers), "", id)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	outs := make([]Outcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range members {
		o := opts
		if i == 0 {
			o = starterOpts
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = m.Step(ctx, 0, Options{Load: o, JoinTimeout: time.Minute})
		}()
	}
	wg.Wait()
	for _, m := range members[1:] {
		m.Leave()
	}
	if err := starter.Finish(ctx); err != nil {
		t.Error(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	return outs
}

// TestDistributedKinds runs a scenario of each kind over three processes
// against a real ensemble and checks the merged result: exact histograms,
// summed counters, the checks across processes, and the history checked
// as one.
func TestDistributedKinds(t *testing.T) {
	ens := enstest.Start(t, 3)
	servers := ens.Servers()
	const clients = 4
	cases := []struct {
		name     string
		scenario string
		d        time.Duration
		edit     func(*scenarios.Spec)
		faults   bool
	}{
		{name: "lock", scenario: "fair-lock", d: 2 * time.Second},
		{name: "rwlock", scenario: "rwlock-mix", d: 2 * time.Second},
		{name: "semaphore", scenario: "semaphore", d: 2 * time.Second, edit: func(s *scenarios.Spec) { s.Semaphore.Leases = 3 }},
		{name: "queue", scenario: "queue", d: 2 * time.Second},
		{name: "election", scenario: "election-churn", d: 2 * time.Second},
		{name: "barrier", scenario: "barrier", d: 2 * time.Second, edit: func(s *scenarios.Spec) { s.Barrier.Size = 4 }},
		// The foreign client (the starter's) deletes and writes to its
		// own clients' nodes; replies are lost. Its lagging member needs
		// the quorum's proxies, which this ensemble has not.
		{name: "adversary", scenario: "fair-lock-adversary", d: 3 * time.Second, faults: true, edit: func(s *scenarios.Spec) {
			s.Faults = slices.DeleteFunc(s.Faults, func(f scenarios.Fault) bool { return f.Kind == scenarios.LagMember })
		}},
		{name: "faults", scenario: "fair-lock-chaos", d: 4 * time.Second, faults: true, edit: func(s *scenarios.Spec) {
			s.Faults = []scenarios.Fault{
				{At: time.Second, Kind: scenarios.KillMember, Member: 1, Duration: time.Second},
				{Every: time.Second, Kind: scenarios.ExpireHolder},
			}
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := shortSpec(t, tc.scenario, clients, tc.d, tc.edit)
			starter := loadgen.Options{Servers: servers}
			if tc.faults {
				starter.Ensemble = ens
			}
			outs := runProcesses(t, fmt.Sprintf("kinds%d", i), 3, servers, run, starter, loadgen.Options{Servers: servers})
			merged := outs[0].Merged
			if merged == nil {
				t.Fatal("no merged result")
			}
			var (
				locals   []*metrics.Result
				ops      int64
				histOps  int64
				requests int64
			)
			for _, o := range outs {
				locals = append(locals, o.Local.Metrics)
				ops += o.Local.Ops
				if o.Local.History != nil {
					histOps += int64(len(o.Local.History.Ops))
				}
				requests += o.Local.Requests["create"]
			}
			checkExact(t, merged.Metrics, locals)
			if merged.Ops != ops || ops == 0 {
				t.Errorf("merged ops %d, want the sum %d of the processes' (not 0)", merged.Ops, ops)
			}
			if merged.Requests["create"] != requests {
				t.Errorf("merged creates %d, want the sum %d", merged.Requests["create"], requests)
			}
			if merged.Run.Clients != 3*run.Clients {
				t.Errorf("merged clients %d, want %d", merged.Run.Clients, 3*run.Clients)
			}
			c := merged.Checks
			if !c.Passed || c.MutualExclusionViolations+c.SemaphoreOverIssued+c.DoubleLeaders+c.LostItems+c.DuplicateItems != 0 || c.LeftoverZnodes != 0 {
				t.Errorf("merged checks: passed %v, violations %q, not checked %q, leftovers %d", c.Passed, c.Violations, c.NotChecked, c.LeftoverZnodes)
			}
			for _, w := range c.Warnings {
				if strings.Contains(w, "holder check") || strings.Contains(w, "barrier arrivals") {
					t.Logf("warning: %s", w)
				}
			}
			l := merged.Linearizability
			if l == nil || l.Result != oracle.ResultOK || !strings.HasPrefix(l.Scope, "every process's operations on one clock (3 processes") {
				t.Fatalf("merged linearizability %+v, want ok over every process on one clock", l)
			}
			if l.Operations < histOps || histOps == 0 {
				t.Errorf("merged history of %d operations, want at least the processes' %d", l.Operations, histOps)
			}
			switch tc.name {
			case "queue":
				crossed := false
				for _, o := range outs {
					loadgen.EachItem(o.Local.QueueItems.Consumed, func(id int64) {
						if id>>40 != int64(o.Local.RunID[len(o.Local.RunID)-1]-'0') {
							crossed = true
						}
					})
				}
				if !crossed {
					t.Errorf("no process consumed another's item: the queue was not shared")
				}
				for _, n := range merged.Notes {
					if strings.HasSuffix(n, loadgen.SharedQueueNote) {
						t.Errorf("merged note %q: the merged result counted the items itself", n)
					}
				}
			case "faults", "adversary":
				var faultEvents int
				for _, e := range merged.Events {
					if e.Kind == loadgen.EventFault {
						faultEvents++
						if !strings.HasPrefix(e.Detail, "process 0: ") {
							t.Errorf("fault event %q from another process than the starter", e.Detail)
						}
					}
				}
				if faultEvents == 0 {
					t.Errorf("no fault in the merged timeline")
				}
				for _, o := range outs[1:] {
					if o.Local.Faults != nil {
						t.Errorf("a joined process injected faults: %+v", o.Local.Faults)
					}
				}
			}
		})
	}
}

// sloppyLock grants at once to everyone: with one client per process, no
// process's guards see two holders; the holder check across processes
// and the history of every process checked as one must.
type sloppyLock struct {
	next  *atomic.Uint64
	token uint64
	lost  chan struct{}
}

func (l *sloppyLock) Lock(context.Context) error    { l.token = l.next.Add(1); return nil }
func (l *sloppyLock) TryLock(context.Context) error { return l.Lock(context.Background()) }
func (l *sloppyLock) Unlock(context.Context) error  { return nil }
func (l *sloppyLock) Lost() <-chan struct{}         { return l.lost }
func (l *sloppyLock) FencingToken() uint64          { return l.token }
func (l *sloppyLock) Node() string                  { return "" }

func TestDistributedCatchesOverlapAcrossProcesses(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	run := shortSpec(t, "fair-lock", 1, 2*time.Second, func(s *scenarios.Spec) {
		s.Hold = scenarios.FixedHold(20 * time.Millisecond)
	})
	var next atomic.Uint64
	opts := loadgen.Options{Servers: servers, NewLocker: func(*recipes.Session, string) recipes.Locker {
		return &sloppyLock{next: &next, lost: make(chan struct{})}
	}}
	outs := runProcesses(t, "sloppy", 3, servers, run, opts, opts)
	c := outs[0].Merged.Checks
	if c.Passed || c.MutualExclusionViolations == 0 {
		t.Errorf("merged checks passed %v with %d mutual exclusion violations, want the overlap across processes caught", c.Passed, c.MutualExclusionViolations)
	}
	across := false
	for _, v := range c.Violations {
		across = across || strings.Contains(v, "at once across processes")
	}
	if !across {
		t.Errorf("violations %q, want the holder check across processes to name an overlap", c.Violations)
	}
	if l := outs[0].Merged.Linearizability; l == nil || l.Result != oracle.ResultViolation {
		t.Errorf("merged linearizability %+v, want a violation in the history of every process", l)
	}
}
