package loadview

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scenarios"
)

// Feed turns the load generator's progress into dashboard snapshots: one
// panel per run of a plan, finished runs keeping their last state. Its
// methods are safe for concurrent use (progress comes from the run's
// ticker, notices from anywhere).
type Feed struct {
	// Now is the clock; it defaults to time.Now (tests replay recorded
	// runs with the times they were recorded at).
	Now func() time.Time

	title, server, report string
	start                 time.Time

	mu      sync.Mutex
	panels  []Scenario
	cur     int
	runID   string
	notices []string
	faults  map[int][]Fault // injected faults, by run
}

// maxNotices is how many notices a snapshot keeps.
const maxNotices = 5

// NewFeed starts a feed for the runs of a plan titled title, against
// server. report is where the report will be written ("" if none).
func NewFeed(title, server, report string, runs []scenarios.Run) *Feed {
	return NewFeedAt(time.Now(), title, server, report, runs)
}

// NewFeedAt is NewFeed for a plan started at start (set Feed.Now too).
func NewFeedAt(start time.Time, title, server, report string, runs []scenarios.Run) *Feed {
	f := &Feed{Now: time.Now, title: title, server: server, report: report, start: start}
	for _, r := range runs {
		f.panels = append(f.panels, Scenario{
			Name: r.Name, Recipe: r.Recipe.Spec().Title, State: "waiting", Clients: r.Clients,
		})
	}
	return f
}

// Notice adds a one-line message (the generator's log lines).
func (f *Feed) Notice(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notices = append(f.notices, s)
	if len(f.notices) > maxNotices {
		f.notices = f.notices[len(f.notices)-maxNotices:]
	}
}

// Starting marks run i as starting.
func (f *Feed) Starting(i int) Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur = i
	f.panels[i].State = "ramping up"
	return f.snapshotLocked(false, false)
}

// Progress takes the current run's progress.
func (f *Feed) Progress(p loadgen.Progress) Snapshot {
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
	sc.Checks = p.Checks
	if sc.Started == 0 && p.Elapsed > 0 {
		sc.Started = f.Now().Sub(f.start) - p.Elapsed
	}
	if len(p.Faults) > 0 {
		if f.faults == nil {
			f.faults = map[int][]Fault{}
		}
		f.faults[f.cur] = f.faults[f.cur][:0]
		for _, e := range p.Faults {
			f.faults[f.cur] = append(f.faults[f.cur], Fault{At: e.At.Sub(f.start), What: e.Detail})
		}
	}
	phases := make([]Phase, 0, len(p.Phases))
	// The main phase first (acquire for locks): the one drawn at first.
	order := append([]metrics.Phase{p.MainPhase}, slices.DeleteFunc(metrics.Phases(), func(ph metrics.Phase) bool { return ph == p.MainPhase })...)
	for ph := range p.Phases {
		if !slices.Contains(order, ph) {
			order = append(order, ph) // the workload's own, e.g. read_acquire
		}
	}
	for _, ph := range order {
		if s, ok := p.Phases[ph]; ok {
			phases = append(phases, phaseOf(ph, s, p))
		}
	}
	sc.Phases = phases
	sc.Herd = herdOf(p.Recipe, p.Totals, sc.Herd)
	if p.Lock != nil && (sc.Lock == nil || p.State != "stopping") {
		// The picture of the lock under load stays once the clients
		// leave (stopping), and after (the final progress has none).
		sc.Lock = p.Lock
	}
	if p.Recipe.Spec().Items {
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

// Event takes one event of the run and returns the snapshot to draw,
// if the event changes what is drawn (a notice shows with the next one).
func (f *Feed) Event(ev loadrun.Event) (Snapshot, bool) {
	switch ev := ev.(type) {
	case loadrun.EventStarting:
		return f.Starting(ev.Index), true
	case loadrun.EventProgress:
		return f.Progress(ev.Progress), true
	case loadrun.EventNotice:
		f.Notice(ev.Line)
	case loadrun.EventEnded:
		return f.Final(ev.Outcome.Results, ev.Outcome.Partial), true
	}
	return Snapshot{}, false
}

// Final marks the runs done with their results' figures.
func (f *Feed) Final(results []*loadgen.Result, partial bool) Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, res := range results {
		sc := &f.panels[i]
		sc.State = "done"
		if res.Partial {
			sc.State = "stopped"
		}
		sc.Ops = res.Ops
		sc.Herd = herdOf(res.Run.Recipe, res.Totals, sc.Herd)
		sc.Violations = res.Checks.Violations
		sc.Checks = report.ChecksOf(res)
	}
	return f.snapshotLocked(true, partial)
}

func (f *Feed) snapshotLocked(done, partial bool) Snapshot {
	s := Snapshot{
		Title:   f.title,
		RunID:   f.runID,
		Server:  f.server,
		Elapsed: f.Now().Sub(f.start),
		Done:    done,
		Partial: partial,
		Notices: append([]string(nil), f.notices...),
		Report:  f.report,
	}
	for i := range f.panels {
		s.Faults = append(s.Faults, f.faults[i]...)
	}
	// A snapshot is never modified after it is sent: copy what the next
	// progress appends to. (Replaced slices, such as Phases, need no copy.)
	for _, p := range f.panels {
		p.Herd.Figures = slices.Clone(p.Herd.Figures)
		p.QueueDepth = append([]float64(nil), p.QueueDepth...)
		s.Scenarios = append(s.Scenarios, p)
	}
	return s
}

// herdOf is the dashboard's figures of recipe over t; a figure not known
// now keeps its last known value (the servers are polled once per
// interval, and a poll can fail).
func herdOf(recipe scenarios.Recipe, t figures.Totals, last Herd) Herd {
	var h Herd
	for _, f := range figures.For(recipe.Figures()) {
		if !f.Dashboard {
			continue
		}
		v := f.Of(t)
		if v < 0 {
			v = last.Value(f.Key)
		}
		h.Figures = append(h.Figures, Figure{Key: f.Key, Label: f.Short, Value: v})
	}
	return h
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// phaseOf is one phase of the progress: its summary, its histogram and its
// percentiles per interval.
func phaseOf(ph metrics.Phase, s metrics.Summary, p loadgen.Progress) Phase {
	if s.HasCorrection {
		// Open model: latency from each operation's intended start.
		s.P50, s.P90, s.P99, s.P999, s.Max = s.CorrectedP50, s.CorrectedP90, s.CorrectedP99, s.CorrectedP999, s.CorrectedMax
	}
	out := Phase{
		Name: string(ph), Count: s.Count,
		P50: msDuration(s.P50), P90: msDuration(s.P90), P99: msDuration(s.P99),
		P999: msDuration(s.P999), Max: msDuration(s.Max),
		Buckets: p.Buckets[ph],
	}
	if len(p.Timeline) > 0 {
		out.P50s = make([]time.Duration, len(p.Timeline))
		out.P99s = make([]time.Duration, len(p.Timeline))
		for i, iv := range p.Timeline {
			if pt, ok := iv.Phases[ph]; ok {
				out.P50s[i], out.P99s[i] = msDuration(pt.P50), msDuration(pt.P99)
			}
		}
	}
	return out
}

func errorCounts(byKind map[string]int64) []ErrorCount {
	var out []ErrorCount
	for k, n := range byKind {
		out = append(out, ErrorCount{Kind: k, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
