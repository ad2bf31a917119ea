package report

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/golden"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func checkGolden(t *testing.T, got []byte) {
	t.Helper()
	golden.Check(t, got)
}

// lockRun simulates a lock scenario deterministically: clients contend for
// one lock for ten seconds, acquire latency around acquireMs, one second of
// stall at stallAt (0: none).
type lockRun struct {
	name, recipe string
	clients      int
	acquireMs    float64
	perSecond    int
	stallAt      int
	wakeups      int64 // per release
	packets      float64
	errors       map[string]int
	seed         uint64
}

// results caches the simulated metrics, which tests only read.
var results = map[uint64]*metrics.Result{}

func (l lockRun) result(t *testing.T) *metrics.Result {
	t.Helper()
	if m, ok := results[l.seed]; ok {
		return m
	}
	m := l.simulate(t)
	results[l.seed] = m
	return m
}

func (l lockRun) simulate(t *testing.T) *metrics.Result {
	t.Helper()
	rec, err := metrics.NewRecorder(t0)
	if err != nil {
		t.Fatal(err)
	}
	shards := []*metrics.Shard{rec.NewShard(), rec.NewShard(), rec.NewShard()}
	rng := rand.New(rand.NewPCG(l.seed, 99))
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	rec.AddSessions(int64(l.clients))
	for sec := 1; sec <= 10; sec++ {
		n := l.perSecond
		if sec == l.stallAt {
			n /= 10
		}
		for i := range n {
			sh := shards[i%len(shards)]
			acq := l.acquireMs * (0.5 + rng.ExpFloat64())
			if sec == l.stallAt {
				acq *= 20
			}
			wait := 0.0 // how late the call was made after its intended start
			if sec == l.stallAt {
				wait = acq / 2
			}
			sh.RecordIntended(metrics.Acquire, ms(acq), ms(acq+wait))
			sh.Record(metrics.Create, ms(0.4+rng.Float64()*0.3))
			sh.Record(metrics.GetChildren, ms(0.3+rng.Float64()*0.2*float64(l.wakeups)/10))
			sh.Record(metrics.WatchSet, ms(0.3+rng.Float64()*0.2))
			sh.Record(metrics.Handoff, ms(0.5+rng.ExpFloat64()*float64(l.wakeups)/20))
			sh.Record(metrics.Hold, ms(1+rng.Float64()))
			sh.Record(metrics.Delete, ms(0.35+rng.Float64()*0.2))
			rec.AddOps(1)
			rec.AddWakeups(l.wakeups)
			rec.AddZKRequests(4 + l.wakeups/10)
		}
		for kind, k := range l.errors {
			if sec%5 == 0 {
				for range k {
					rec.AddError(kind)
				}
			}
		}
		if sec == 7 {
			rec.AddSessions(-int64(l.clients / 10))
		}
		rec.Rotate(t0.Add(time.Duration(sec) * time.Second))
	}
	return rec.Finish(t0.Add(10 * time.Second))
}

func (l lockRun) scenario(t *testing.T) *Scenario {
	m := l.result(t)
	ops := m.Counts.Ops
	res := &loadgen.Result{
		Run:         scenarios.Run{Spec: scenarios.Spec{Name: l.name, Recipe: scenarios.Recipe(l.recipe), Clients: l.clients}},
		Metrics:     m,
		WindowStart: t0, Stop: t0.Add(10 * time.Second),
		Totals: figures.Totals{
			figures.Operations: ops, figures.Releases: ops, figures.Wakeups: l.wakeups * ops,
			figures.ZKRequests: m.Counts.ZKRequests, figures.ServerPackets: int64(l.packets * float64(ops)),
			figures.WatchFanout: l.wakeups * ops,
		},
		Checks:   Checks{FIFOChecked: l.recipe == "fair-lock", Passed: true},
		Requests: map[string]int64{"create": ops, "delete": ops, "get_children": ops * (1 + l.wakeups/10)},
		Events: []loadgen.Event{
			{At: t0.Add(4 * time.Second), Kind: EventFault, Detail: "paused member 2 (leader)"},
			{At: t0.Add(6 * time.Second), Kind: EventRecover, Detail: "resumed member 2"},
		},
	}
	return NewScenario(res)
}

var (
	herdLock = lockRun{name: "herd-lock", recipe: "herd-lock", clients: 1000, acquireMs: 400, perSecond: 40,
		stallAt: 5, wakeups: 999, packets: 2004.5, errors: map[string]int{"connection_loss": 2, "timeout": 1}, seed: 1}
	fairLock = lockRun{name: "fair-lock", recipe: "fair-lock", clients: 1000, acquireMs: 3, perSecond: 600,
		wakeups: 1, packets: 8.1, seed: 2}
)

// herdVsFair is a run of two passing scenarios.
func herdVsFair(t *testing.T) *Run {
	return &Run{
		ZkherdVersion: "0.1.0-test", RunID: "3f9c2a1e", Title: "herd-vs-fair", Server: "127.0.0.1:2181",
		LocalEnsemble: true, StartedAt: t0,
		Scenarios: []*Scenario{herdLock.scenario(t), fairLock.scenario(t)},
	}
}

// failedRun is a partial run whose mutual-exclusion check failed.
func failedRun(t *testing.T) *Run {
	broken := fairLock
	broken.name, broken.recipe, broken.seed = "broken-lock", "fair-lock", 3
	s := broken.scenario(t)
	s.Partial = true
	s.Checks = Checks{
		MutualExclusionViolations: 3, FencingViolations: 1, LeftoverZnodes: 2,
		LeftoverPaths: []string{"/zkherd/runs/77aa/lock/n_0000000012", "/zkherd/runs/77aa/lock/n_0000000013"},
		Violations: []string{
			"t=2.1s: client 17 granted the lock while client 4 held it (in-section count 2)",
			"t=2.1s: fencing token 118 not above previous 118",
			"t=7.9s: client 3 granted the lock while client 99 held it (in-section count 2)",
			"2 znodes left in /zkherd/runs/77aa after the run",
		},
	}
	s.Events = append(s.Events, Event{T: 2.1, Kind: EventViolation, Detail: "mutual exclusion: clients 17 and 4"})
	s.Notes = []string{"stopped by Ctrl-C after 10.0s; the report is partial"}
	s.Anomalies = &Anomalies{OverRange: 2}
	return &Run{ZkherdVersion: "0.1.0-test", RunID: "77aa", Partial: true, Server: "127.0.0.1:2181,127.0.0.1:2182",
		StartedAt: t0, Scenarios: []*Scenario{s}}
}

func TestNewScenario(t *testing.T) {
	s := fairLock.scenario(t)
	tests := []struct {
		name      string
		got, want any
	}{
		{"operations", s.Operations, int64(6000)},
		{"duration", s.DurationS, 10.0},
		{"throughput", s.ThroughputPerS, 600.0},
		{"timeline points", len(s.Timeline), 10},
		{"first point time", s.Timeline[0].T, 1.0},
		{"sessions alive at the end", s.Timeline[9].SessionsAlive, int64(900)},
		{"events", len(s.Events), 2},
		{"fault time", s.Events[0].T, 4.0},
		{"acquire corrected", s.LatencyMs["acquire"].Corrected, true},
		{"hold not corrected", s.LatencyMs["hold"].Corrected, false},
		{"acquire count", s.LatencyMs["acquire"].Count, int64(6000)},
		{"acquire from intended start, never below service time", s.LatencyMs["acquire"].P99 >= s.LatencyMs["acquire"].ServiceP99, true},
		{"spectra", len(s.Spectrum), 7},
		{"main phase", s.MainPhase(), "acquire"},
		{"phases", len(s.Phases()), 7},
		{"anomalies", s.Anomalies == nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	t.Run("no totals: no figure known", func(t *testing.T) {
		m := fairLock.result(t)
		s := NewScenario(&loadgen.Result{Run: scenarios.Run{Spec: scenarios.Spec{Name: "x", Recipe: scenarios.FairLock}}, Metrics: m})
		for _, f := range figures.All() {
			if got := s.Herd.Figure(f.Key); got != figures.Unknown {
				t.Errorf("%s = %v, want unknown (%v)", f.Key, got, figures.Unknown)
			}
		}
	})
	t.Run("no metrics", func(t *testing.T) {
		s := NewScenario(&loadgen.Result{Run: scenarios.Run{Spec: scenarios.Spec{Name: "never-ran"}}})
		if len(s.LatencyMs) != 0 || s.Checks.Violations == nil || s.Errors.ByKind == nil {
			t.Errorf("got %+v, want empty latencies and non-nil lists", s)
		}
	})
}

func nan() float64 { zero := 0.0; return zero / zero }

// TestFigureThresholds: a threshold names a figure by its key; a figure
// the recipe does not have, or does not know, is not measured.
func TestFigureThresholds(t *testing.T) {
	parse := func(expr string) scenarios.Threshold {
		th, err := scenarios.ParseThreshold(expr)
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	herd, fair := herdLock.scenario(t), fairLock.scenario(t)
	noServer := fairLock.scenario(t)
	noServer.Herd.Figures[figures.ServerPacketsPerAcquisition] = figures.Unknown
	queue := fairLock.scenario(t)
	queue.Recipe = "queue"
	tests := []struct {
		name           string
		s              *Scenario
		expr           string
		measured, pass bool
	}{
		{"fair lock wakes one", fair, "wakeups_per_release<2", true, true},
		{"herd lock wakes the herd", herd, "wakeups_per_release<2", true, false},
		{"server counts unknown", noServer, "server_packets_per_acquisition<100", false, false},
		{"a queue has no wake-ups per release", queue, "wakeups_per_release<2", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.s.Thresholds = nil
			tt.s.CheckThresholds([]scenarios.Threshold{parse(tt.expr)})
			got := tt.s.Thresholds[0]
			if got.Measured != tt.measured || got.Passed != tt.pass {
				t.Errorf("got measured %v passed %v (%s), want %v %v", got.Measured, got.Passed, got.Text(), tt.measured, tt.pass)
			}
		})
	}
}

// TestOldHerdReads: a report written before the figures had a list (no
// operations or releases in its herd object) reads back with its figures.
func TestOldHerdReads(t *testing.T) {
	var h Herd
	old := `{"wakeups_per_release":1.5,"zk_requests_per_acquisition":4,"server_packets_per_acquisition":-1,
		"watch_fanout_per_acquisition":-1,"wakeups":30,"zk_requests":80,"server_packets":0,"watch_fanout":0,
		"mntr_error":"mntr refused"}`
	if err := json.Unmarshal([]byte(old), &h); err != nil {
		t.Fatal(err)
	}
	if h.Figure(figures.WakeupsPerRelease) != 1.5 || h.Figure(figures.ServerPacketsPerAcquisition) != figures.Unknown ||
		h.Totals[figures.Wakeups] != 30 || h.MntrError != "mntr refused" {
		t.Errorf("got %+v", h)
	}
}
