package distrib

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// expectedMerge merges the phase's histograms of results directly.
func expectedMerge(t *testing.T, p metrics.Phase, corrected bool, rs []*metrics.Result) *hdrhistogram.Histogram {
	t.Helper()
	var out *hdrhistogram.Histogram
	for _, r := range rs {
		tot, ok := r.Totals[p]
		if !ok {
			continue
		}
		h := tot.Raw
		if corrected {
			h = tot.Corrected
		}
		if out == nil {
			out = newLike(h)
		}
		if n := out.Merge(h); n != 0 {
			t.Fatalf("direct merge dropped %d values", n)
		}
	}
	return out
}

// checkExact checks that merged holds, phase by phase, exactly the merge
// of the results' histograms.
func checkExact(t *testing.T, merged *metrics.Result, rs []*metrics.Result) {
	t.Helper()
	want := map[metrics.Phase]bool{}
	for _, r := range rs {
		for _, p := range r.Phases {
			want[p] = true
		}
	}
	if len(merged.Phases) != len(want) {
		t.Errorf("merged phases %v, want %d phases", merged.Phases, len(want))
	}
	for p := range want {
		for _, corrected := range []bool{false, true} {
			exp := expectedMerge(t, p, corrected, rs)
			tot, ok := merged.Totals[p]
			if !ok {
				t.Errorf("phase %s missing from the merge", p)
				continue
			}
			got := tot.Raw
			if corrected {
				got = tot.Corrected
			}
			if !got.Equals(exp) {
				t.Errorf("phase %s (corrected %v): merged count %d p99 %d max %d, want the exact merge: count %d p99 %d max %d",
					p, corrected, got.TotalCount(), got.ValueAtQuantile(99), got.Max(), exp.TotalCount(), exp.ValueAtQuantile(99), exp.Max())
			}
		}
	}
}

func TestMergeExact(t *testing.T) {
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	// Three "processes", each its own recorder fed by its own goroutines.
	results := make([]*metrics.Result, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, err := metrics.NewRecorder(start)
			if err != nil {
				t.Error(err)
				return
			}
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			sh := rec.NewShard()
			for k := range 20_000 {
				sh.Record(metrics.Acquire, time.Duration(rng.ExpFloat64()*float64(time.Duration(i+1)*time.Millisecond)))
				sh.Record(metrics.Hold, time.Duration(rng.IntN(5000))*time.Microsecond)
				if k%10 == 0 {
					sh.RecordCorrected(metrics.Handoff, time.Duration(rng.IntN(30))*time.Millisecond, 5*time.Millisecond)
				}
				if k%5000 == 4999 {
					rec.Rotate(start.Add(time.Duration(k/5000+1) * time.Second))
				}
				rec.AddOps(1)
			}
			results[i] = rec.Finish(start.Add(5 * time.Second))
		}()
	}
	wg.Wait()
	var parts []*Part
	for i, r := range results {
		lock := &loadgen.WaitGraph{Path: "/ns/lock-000", WaitersTotal: 10 + i, Holders: []loadgen.Contender{{Client: i, Node: "/ns/lock-000/n", For: time.Millisecond}}}
		p, err := FromResult(i, &loadgen.Result{Metrics: r, Ops: r.Counts.Ops, Start: start, WindowStart: start, Stop: start.Add(5 * time.Second), Lock: lock})
		if err != nil {
			t.Fatal(err)
		}
		// As published: through JSON.
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Part
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, &back)
	}
	merged, err := Merge(scenarios.Run{}, "r", "/ns", parts)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, merged.Metrics, results)
	if g := merged.Lock; g == nil || g.WaitersTotal != 10 || len(g.Holders) != 1 || g.Holders[0].For != time.Millisecond {
		t.Errorf("merged wait graph %+v, want the first process's, through JSON", g)
	}
	if got, want := merged.Ops, int64(60_000); got != want {
		t.Errorf("merged ops %d, want %d", got, want)
	}
	if got, want := merged.Metrics.Counts.Ops, int64(60_000); got != want {
		t.Errorf("merged metrics ops %d, want %d", got, want)
	}
	var ivOps int64
	for _, iv := range merged.Metrics.Intervals {
		ivOps += iv.Counts.Ops
	}
	if ivOps != 60_000 || len(merged.Metrics.Intervals) != len(results[0].Intervals) {
		t.Errorf("merged timeline: %d intervals with %d ops, want %d intervals with 60000", len(merged.Metrics.Intervals), ivOps, len(results[0].Intervals))
	}
	if _, err := Merge(scenarios.Run{}, "r", "/ns", nil); !errors.Is(err, ErrNoParts) {
		t.Errorf("Merge(nil) = %v, want ErrNoParts", err)
	}
}

func session(t *testing.T, servers []string) *recipes.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := recipes.NewSession(ctx, servers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// fairLockRun is a short fair-lock run of clients clients per process.
func fairLockRun(t *testing.T, clients int, d time.Duration) scenarios.Run {
	t.Helper()
	spec, _ := scenarios.Builtin("fair-lock")
	spec.Clients, spec.Duration = clients, d
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec.Runs()[0]
}

// checkGone checks that nothing is left under /zkherd.
func checkGone(t *testing.T, s *recipes.Session) {
	t.Helper()
	ok, _, err := s.Conn().Exists("/zkherd")
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		children, _, _ := s.Conn().Children(loadgen.Root)
		t.Errorf("/zkherd still exists after the run (runs: %v)", children)
	}
}

func TestThreeProcesses(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx := context.Background()
	plan := Plan{RunID: "three", Processes: 3, Title: "fair-lock", Runs: []scenarios.Run{fairLockRun(t, 10, 3*time.Second)}}
	starter, err := Start(ctx, session(t, ens.Servers()), "", plan)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		o   []Outcome
		err error
	}
	results := make([]outcome, 3)
	members := []*Member{starter}
	for range 2 {
		m, err := Join(ctx, session(t, ens.Servers()), "", "three")
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	var wg sync.WaitGroup
	for i, m := range members {
		if m.Index() != i {
			t.Errorf("member %d has index %d", i, m.Index())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := m.Step(ctx, 0, Options{Load: loadgen.Options{Servers: ens.Servers()}, JoinTimeout: time.Minute})
			results[i] = outcome{[]Outcome{o}, err}
		}()
	}
	wg.Wait()
	var locals []*metrics.Result
	var ops int64
	for i, r := range results {
		if r.err != nil || len(r.o) != 1 {
			t.Fatalf("process %d: %d outcomes, %v", i, len(r.o), r.err)
		}
		locals = append(locals, r.o[0].Local.Metrics)
		ops += r.o[0].Local.Ops
	}
	merged := results[0].o[0].Merged
	if merged == nil {
		t.Fatal("the starter has no merged result")
	}
	for i := 1; i < 3; i++ {
		if results[i].o[0].Merged != nil {
			t.Errorf("process %d merged too", i)
		}
	}
	checkExact(t, merged.Metrics, locals)
	if merged.Ops != ops || ops == 0 {
		t.Errorf("merged ops %d, want the sum %d of the processes'", merged.Ops, ops)
	}
	if c := merged.Checks; !c.Passed || c.MutualExclusionViolations != 0 || c.LeftoverZnodes != 0 {
		t.Errorf("merged checks %+v, want passed", c)
	}
	var localOps int64
	for i, r := range results {
		l := r.o[0].Local.Linearizability
		if l == nil || l.Result != "ok" || !strings.HasPrefix(l.Scope, "process ") {
			t.Fatalf("process %d: linearizability %+v, want ok on its own clock", i, l)
		}
		localOps += l.Operations
	}
	if l := merged.Linearizability; l == nil || l.Result != "ok" || l.Operations != localOps || !strings.HasPrefix(l.Scope, "every process's operations on one clock (3 processes") {
		t.Errorf("merged linearizability %+v, want ok over the %d operations of the processes, on one clock", l, localOps)
	}
	if f := merged.Fencing; f == nil || f.Writes == 0 || f.Rejected != 0 {
		t.Errorf("merged fencing %+v, want writes through the shared znode, none rejected", f)
	}
	for _, m := range members[1:] {
		m.Leave()
	}
	if err := starter.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	checkGone(t, session(t, ens.Servers()))
}

func TestJoinRejects(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx := context.Background()
	s := session(t, ens.Servers())
	run := fairLockRun(t, 2, time.Second)

	waiting, err := Start(ctx, s, "", Plan{RunID: "full", Processes: 1, Runs: []scenarios.Run{run}})
	if err != nil {
		t.Fatal(err)
	}
	running, err := Start(ctx, s, "", Plan{RunID: "running", Processes: 2, Runs: []scenarios.Run{run}})
	if err != nil {
		t.Fatal(err)
	}
	if err := running.setState(StateRunning); err != nil {
		t.Fatal(err)
	}
	finished, err := Start(ctx, s, "", Plan{RunID: "finished", Processes: 2, Runs: []scenarios.Run{run}})
	if err != nil {
		t.Fatal(err)
	}
	if err := finished.setState(StateFinished); err != nil {
		t.Fatal(err)
	}
	other, err := Start(ctx, s, "", Plan{RunID: "other", Processes: 2, Runs: []scenarios.Run{run}, Version: "0.1-other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conn().Create(loadgen.Root+"/single", []byte(`{"scenario":"fair-lock"}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want error
	}{
		{"nosuch", ErrNoRun},
		{"single", ErrNoRun},
		{"full", ErrFull},
		{"running", ErrStarted},
		{"finished", ErrFinished},
		{"other", ErrVersion},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			before, _, _ := s.Conn().Children(loadgen.Root)
			_, err := Join(ctx, session(t, ens.Servers()), "", tt.id)
			if !errors.Is(err, tt.want) {
				t.Errorf("Join(%s) = %v, want %v", tt.id, err, tt.want)
			}
			after, _, _ := s.Conn().Children(loadgen.Root)
			if len(after) != len(before) {
				t.Errorf("runs %v after a failed join, want %v", after, before)
			}
			if tt.id == "full" {
				members, _, _ := s.Conn().Children(loadgen.Root + "/full/members")
				if len(members) != 1 {
					t.Errorf("members of the full run %v after a failed join, want only the starter", members)
				}
			}
		})
	}
	if _, err := Start(ctx, s, "", Plan{RunID: "full", Processes: 1, Runs: []scenarios.Run{run}}); !errors.Is(err, ErrBadPlan) {
		t.Errorf("Start with a run id in use = %v, want ErrBadPlan", err)
	}
	for _, m := range []*Member{waiting, running, finished, other} {
		if err := m.Finish(ctx); err != nil {
			t.Error(err)
		}
	}
	s.Conn().Delete(loadgen.Root+"/single", -1)
	s.Conn().Delete(loadgen.Root, -1)
	s.Conn().Delete("/zkherd", -1)
	checkGone(t, s)
}
