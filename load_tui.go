package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
	"github.com/zkherd/zkherd/tui"
	"github.com/zkherd/zkherd/tui/loadview"
)

// dashboard is the load dashboard as the runs' display: it runs exec
// while the dashboard shows it. Quitting the dashboard stops the runs
// gracefully, like Ctrl-C: the report is partial.
func dashboard(ctx context.Context, plan *loadrun.Plan, server string, exec func(context.Context, loadrun.Sink) loadrun.Outcome) loadrun.Outcome {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	feed := newDashboardFeed(plan, server)
	updates := make(chan loadview.Snapshot, 64)
	var (
		out  loadrun.Outcome
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer close(updates)
		out = exec(runCtx, feedSink{feed, updates})
		updates <- feed.final(out.Results, out.Partial || runCtx.Err() != nil)
	}()
	terr := tui.RunLoad(ctx, updates, tui.LoadOptions{})
	if terr != nil {
		stopRun() // the user quit, or the terminal failed: stop gracefully
	}
	<-done
	if terr != nil && !errors.Is(terr, tui.ErrQuit) && !errors.Is(terr, context.Canceled) && out.Err == nil {
		out.Err = fmt.Errorf("load dashboard: %w (use --no-tui)", terr)
	}
	if errors.Is(terr, tui.ErrQuit) && len(out.Results) > 0 {
		out.Partial = true
	}
	return out
}

// feedSink sends the runs' reports to the dashboard as snapshots.
type feedSink struct {
	feed    *dashboardFeed
	updates chan<- loadview.Snapshot
}

func (s feedSink) Starting(i int, _ scenarios.Run, _ string) { s.updates <- s.feed.starting(i) }
func (s feedSink) Progress(p loadgen.Progress)               { s.updates <- s.feed.progress(p) }
func (s feedSink) Notice(line string)                        { s.feed.notice(line) }

// dashboardFeed turns the generator's progress into dashboard snapshots:
// one panel per run of the plan, finished runs keeping their last state.
type dashboardFeed struct {
	title, server string
	start         time.Time

	mu      sync.Mutex
	panels  []loadview.Scenario
	cur     int
	runID   string
	notices []string
	faults  map[int][]loadview.Fault // injected faults, by run
}

func newDashboardFeed(plan *loadrun.Plan, server string) *dashboardFeed {
	f := &dashboardFeed{title: plan.Title, server: server, start: time.Now()}
	for _, r := range plan.Runs {
		f.panels = append(f.panels, loadview.Scenario{
			Name: r.Name, Recipe: recipeTitle(r.Recipe), State: "waiting", Clients: r.Clients,
		})
	}
	return f
}

func recipeTitle(r scenarios.Recipe) string {
	switch r {
	case scenarios.FairLock:
		return "fair lock"
	case scenarios.HerdLock:
		return "herd lock"
	case scenarios.HerdChildren:
		return "herd lock (children watch)"
	case scenarios.RWLock:
		return "read/write lock"
	}
	return string(r)
}

func (f *dashboardFeed) notice(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notices = append(f.notices, s)
	if len(f.notices) > 5 {
		f.notices = f.notices[len(f.notices)-5:]
	}
}

func (f *dashboardFeed) starting(i int) loadview.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur = i
	f.panels[i].State = "ramping up"
	return f.snapshotLocked(false, false)
}

func (f *dashboardFeed) progress(p loadgen.Progress) loadview.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runID = p.RunID
	sc := &f.panels[f.cur]
	sc.State = p.State
	sc.Clients = p.Clients
	sc.SessionsAlive = p.SessionsAlive
	sc.Ops = p.Ops
	sc.Throughput = p.Throughput
	sc.ErrorsTotal = p.Errors
	sc.Errors = errorCounts(p.ErrorsByKind)
	sc.Violations = p.Violations
	if sc.Started == 0 && p.Elapsed > 0 {
		sc.Started = time.Since(f.start) - p.Elapsed
	}
	if len(p.Faults) > 0 {
		if f.faults == nil {
			f.faults = map[int][]loadview.Fault{}
		}
		f.faults[f.cur] = f.faults[f.cur][:0]
		for _, e := range p.Faults {
			f.faults[f.cur] = append(f.faults[f.cur], loadview.Fault{At: e.At.Sub(f.start), What: e.Detail})
		}
	}
	sc.Phases = sc.Phases[:0:0]
	for _, ph := range metrics.Phases() {
		if s, ok := p.Phases[ph]; ok {
			sc.Phases = append(sc.Phases, phaseOf(string(ph), s))
		}
	}
	sc.Herd.WakeupsPerRelease = p.WakeupsPerRelease
	sc.Herd.WakeupsSeries = append(sc.Herd.WakeupsSeries, p.WakeupsPerRelease)
	sc.Herd.ZKRequestsPerAcquisition = p.ZKRequestsPerAcquisition
	if p.PacketsPerAcquisition >= 0 {
		sc.Herd.PacketsPerAcquisition = p.PacketsPerAcquisition
	}
	if p.Recipe == scenarios.Queue {
		sc.QueueDepth = append(sc.QueueDepth, float64(p.QueueDepth))
	}
	snap := f.snapshotLocked(false, false)
	snap.Elapsed = p.Elapsed
	if p.Window > 0 {
		snap.Elapsed = p.Window
	}
	snap.Duration = p.Duration
	return snap
}

// final marks the runs done with their results' figures.
func (f *dashboardFeed) final(results []*loadgen.Result, partial bool) loadview.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, res := range results {
		sc := &f.panels[i]
		sc.State = "done"
		if res.Partial {
			sc.State = "stopped"
		}
		sc.Ops = res.Ops
		sc.Herd.WakeupsPerRelease = res.Herd.WakeupsPerRelease
		sc.Herd.ZKRequestsPerAcquisition = res.Herd.ZKRequestsPerAcquisition
		if res.Herd.ServerPacketsPerAcquisition >= 0 {
			sc.Herd.PacketsPerAcquisition = res.Herd.ServerPacketsPerAcquisition
		}
		sc.Violations = res.Checks.Violations
	}
	return f.snapshotLocked(true, partial)
}

func (f *dashboardFeed) snapshotLocked(done, partial bool) loadview.Snapshot {
	s := loadview.Snapshot{
		Title:   f.title,
		RunID:   f.runID,
		Server:  f.server,
		Elapsed: time.Since(f.start),
		Done:    done,
		Partial: partial,
		Notices: append([]string(nil), f.notices...),
	}
	for i := range f.panels {
		s.Faults = append(s.Faults, f.faults[i]...)
	}
	for _, p := range f.panels {
		p.Throughput = append([]float64(nil), p.Throughput...)
		p.Phases = append([]loadview.Phase(nil), p.Phases...)
		p.Herd.WakeupsSeries = append([]float64(nil), p.Herd.WakeupsSeries...)
		p.QueueDepth = append([]float64(nil), p.QueueDepth...)
		p.Violations = append([]string(nil), p.Violations...)
		s.Scenarios = append(s.Scenarios, p)
	}
	return s
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func phaseOf(name string, s metrics.Summary) loadview.Phase {
	if s.HasCorrection {
		// Open model: latency from each operation's intended start.
		s.P50, s.P90, s.P99, s.P999, s.Max = s.CorrectedP50, s.CorrectedP90, s.CorrectedP99, s.CorrectedP999, s.CorrectedMax
	}
	return loadview.Phase{
		Name: name, Count: s.Count,
		P50: msDuration(s.P50), P90: msDuration(s.P90), P99: msDuration(s.P99),
		P999: msDuration(s.P999), Max: msDuration(s.Max),
	}
}

func errorCounts(byKind map[string]int64) []loadview.ErrorCount {
	var out []loadview.ErrorCount
	for k, n := range byKind {
		out = append(out, loadview.ErrorCount{Kind: k, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
