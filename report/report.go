package report

import (
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/scenarios"
)

var (
	// ErrUnwritable is matched (errors.Is) by the error WriteDir returns
	// when it cannot write into the output directory.
	ErrUnwritable = errors.New("report: output directory not writable")
	// ErrMalformed is returned by ReadJSON for a file that is not a report.
	ErrMalformed = errors.New("report: not a zkherd report")
)

// Run is a whole report: report.json's top level.
type Run struct {
	ZkherdVersion string `json:"zkherd_version"`
	RunID         string `json:"run_id"`
	// Title names what was run (a built-in scenario, a comparison, a file).
	Title string `json:"title,omitempty"`
	// Partial is set when the run was stopped before it was done.
	Partial bool   `json:"partial"`
	Server  string `json:"server"`
	// LocalEnsemble is set when zkherd started the ensemble for the run.
	LocalEnsemble bool        `json:"local_ensemble"`
	StartedAt     time.Time   `json:"started_at,omitzero"`
	Scenarios     []*Scenario `json:"scenarios"`
	// ScaleModel, for a sweep, is the scale model against the
	// measurements (scale.go).
	ScaleModel *ScaleModel `json:"scale_model,omitempty"`
	// FindMax, for zkherd load --find-max, is the search's curve and the
	// highest rate within its target (findmax.go).
	FindMax *FindMax `json:"find_max,omitempty"`
}

// Passed reports whether every scenario's checks passed and every
// threshold held.
func (r *Run) Passed() bool { return !r.Failed() }

// Scenario is one scenario run of a report.
type Scenario struct {
	Name    string `json:"name"`
	Recipe  string `json:"recipe"`
	Clients int    `json:"clients"`
	// Arrival is the arrival model (closed, stampede, constant, poisson);
	// runs of different models measure different things.
	Arrival string `json:"arrival,omitempty"`
	// DurationS is the length of the operations window in seconds.
	DurationS      float64 `json:"duration_s"`
	Operations     int64   `json:"operations"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	// TargetRatePerS is the rate an open-model run was asked for (0 for a
	// closed loop): compare with ThroughputPerS.
	TargetRatePerS float64 `json:"target_rate_per_s,omitempty"`
	// AchievedRatePerS is the rate the scheduled operations ran at (for a
	// queue, items produced; otherwise ThroughputPerS).
	AchievedRatePerS float64 `json:"achieved_rate_per_s,omitempty"`
	// Thresholds are the pass/fail criteria the run was checked against.
	Thresholds []Threshold `json:"thresholds,omitempty"`
	Errors     Errors      `json:"errors"`
	// LatencyMs sums up every phase with values, keyed by phase name.
	LatencyMs map[string]Latency `json:"latency_ms"`
	Herd      Herd               `json:"herd"`
	Checks    Checks             `json:"checks"`

	// Partial is set when this scenario was stopped before it was done.
	Partial bool `json:"partial"`
	// StartedAt is the origin of every t_s: when the scenario's metrics
	// started (its first session).
	StartedAt time.Time `json:"started_at,omitzero"`
	// Ramp is the ramp-up's own figures, before the window (nil when the
	// window opened with the first session); DrainS is how long the
	// clients took to stop after the window.
	Ramp *Ramp `json:"ramp,omitempty"`
	// Stages is a scheduled run's figures per stage (--rate R:D,...).
	Stages []Stage `json:"stages,omitempty"`
	DrainS float64 `json:"drain_s,omitempty"`
	// WindowStartS is when operations began, in seconds since StartedAt
	// (after the ramp-up).
	WindowStartS float64 `json:"window_start_s"`
	// Requests counts the clients' ZooKeeper requests by kind.
	Requests map[string]int64 `json:"zk_requests_by_kind,omitempty"`
	// Notes are things the user should know, one line each.
	Notes []string `json:"notes,omitempty"`
	// Anomalies counts values not recorded as measured (see metrics.Anomalies).
	Anomalies *Anomalies `json:"anomalies,omitempty"`
	// Timeline has one point per metrics interval (normally a second).
	Timeline []Point `json:"timeline,omitempty"`
	// Events are faults, recoveries and check violations in time.
	Events []Event `json:"events,omitempty"`
	// Faults is what the scenario's faults did and cost; Fencing what the
	// locks' guarded resources saw (faults.go).
	Faults  *Faults  `json:"faults,omitempty"`
	Fencing *Fencing `json:"fencing,omitempty"`
	// Spectrum is each phase's latency by percentile, for plots (from the
	// intended start in open-model runs, see Latency.Corrected).
	Spectrum map[string][]SpectrumPoint `json:"spectrum,omitempty"`
	// Histogram is each phase's latencies in power-of-two buckets (the
	// dashboard's histogram; from the intended start in open-model runs),
	// the empty ones left out.
	Histogram map[string][]Bucket `json:"histogram,omitempty"`
	// WaitGraph is who waited on whom at the first lock at the window's
	// busiest moment (lock scenarios; waitgraph.go).
	WaitGraph *WaitGraph `json:"wait_graph,omitempty"`
	// Linearizability is what the oracle found in the run's history
	// (package oracle); History the history itself, for history.jsonl.
	Linearizability *oracle.Result  `json:"linearizability,omitempty"`
	History         *oracle.History `json:"-"`

	// Metrics holds the histograms behind the figures, for the .hgrm and
	// .hlog files; nil for a scenario read back from JSON.
	Metrics *metrics.Result `json:"-"`
}

// recipe is what the figures table needs of the scenario's recipe.
func (s *Scenario) recipe() figures.Recipe { return scenarios.Recipe(s.Recipe).Figures() }

// Errors counts failed operations.
type Errors struct {
	Total  int64            `json:"total"`
	ByKind map[string]int64 `json:"by_kind"`
}

// Latency sums up one phase in milliseconds.
type Latency struct {
	Count         int64   `json:"count"`
	P50           float64 `json:"p50"`
	P90           float64 `json:"p90"`
	P99           float64 `json:"p99"`
	P999          float64 `json:"p999"`
	Max           float64 `json:"max"`
	CorrectedP99  float64 `json:"corrected_p99"`
	Mean          float64 `json:"mean"`
	CorrectedP999 float64 `json:"corrected_p999"`
	CorrectedMax  float64 `json:"corrected_max"`
	// Corrected is set for open-model runs, whose operations have an
	// intended start: P50 to Max and Mean are then measured from it (wrk2's
	// method, which counts the time an operation waited to start), the
	// Corrected* fields repeat them, and ServiceP50 and ServiceP99 are
	// measured from the call alone. Closed-loop runs have no intended start:
	// everything is measured from the call.
	Corrected  bool    `json:"corrected"`
	ServiceP50 float64 `json:"service_p50,omitempty"`
	ServiceP99 float64 `json:"service_p99,omitempty"`
	// OverRange counts values above the histograms' range, recorded as
	// its top.
	OverRange int64 `json:"over_range,omitempty"`
}

// Checks are the load generator's own: report.json writes them as they
// are (the JSON names are on loadgen's fields).
type Checks = loadgen.Checks

// Anomalies count latency values not recorded as measured.
type Anomalies struct {
	OverRange    int64 `json:"over_range"`
	Negative     int64 `json:"negative"`
	Lost         int64 `json:"lost"`
	UnknownPhase int64 `json:"unknown_phase"`
}

// Point is one interval of a scenario's timeline.
type Point struct {
	// T is the end of the interval in seconds since the scenario started;
	// IntervalS its length.
	T              float64 `json:"t_s"`
	IntervalS      float64 `json:"interval_s"`
	Ops            int64   `json:"ops"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	Errors         int64   `json:"errors"`
	SessionsAlive  int64   `json:"sessions_alive"`
	Wakeups        int64   `json:"wakeups"`
	ZKRequests     int64   `json:"zk_requests"`
	// QueueDepth is the queue's depth at the end of the interval (queue
	// scenarios only).
	QueueDepth *int64 `json:"queue_depth,omitempty"`
	// LatencyMs holds the phases with values in the interval.
	LatencyMs map[string]PointLatency `json:"latency_ms,omitempty"`
}

// PointLatency sums up one phase in one interval, in milliseconds.
type PointLatency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Event kinds.
const (
	EventFault     = "fault"
	EventRecover   = "recover"
	EventViolation = "violation"
	EventNote      = "note"
)

// Event is something that happened during a scenario: a fault injected, a
// recovery, a check violation.
type Event struct {
	// T is in seconds since the scenario started.
	T      float64 `json:"t_s"`
	Kind   string  `json:"kind"`
	Detail string  `json:"detail"`
}

// Bucket counts latencies up to UpToMs, above the previous bucket's.
type Bucket struct {
	UpToMs float64 `json:"up_to_ms"`
	Count  int64   `json:"count"`
}

// SpectrumPoint is the latency in milliseconds at a percentile (0-100).
type SpectrumPoint struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
}

// NewScenario builds a scenario report from a load generator's result:
// its metrics (nil for a run that never started: the scenario then has no
// latencies) and what the generator knows beyond them. Durations become
// milliseconds or seconds here, and times become seconds since the
// metrics' start; the scenario's thresholds are checked.
func NewScenario(res *loadgen.Result) *Scenario {
	m := res.Metrics
	s := &Scenario{
		Name:             res.Run.Name,
		Recipe:           string(res.Run.Recipe),
		Clients:          res.Run.Clients,
		Arrival:          string(res.Run.Arrival.Kind),
		Partial:          res.Partial,
		Ramp:             newRamp(res.Ramp),
		DrainS:           round3(res.Drain.Seconds()),
		Herd:             newHerd(res.Totals, res.MntrError),
		Checks:           res.Checks,
		TargetRatePerS:   res.TargetRate,
		AchievedRatePerS: res.AchievedRate,
		Requests:         maps.Clone(res.Requests),
		Notes:            slices.Clone(res.Notes),
		Faults:           newFaults(res.Faults),
		Fencing:          newFencing(res),
		LatencyMs:        map[string]Latency{},
		Errors:           Errors{ByKind: map[string]int64{}},
		Metrics:          m,
		Linearizability:  res.Linearizability,
		History:          res.History,
	}
	defer s.CheckThresholds(res.Run.Thresholds)
	s.Checks.Violations = slices.Clone(s.Checks.Violations)
	s.Checks.Warnings = slices.Clone(s.Checks.Warnings)
	s.Checks.LeftoverPaths = slices.Clone(s.Checks.LeftoverPaths)
	if s.Checks.Violations == nil {
		s.Checks.Violations = []string{}
	}
	if m == nil {
		s.Operations = res.Ops
		return s
	}
	s.StartedAt = m.Start
	s.WaitGraph = newWaitGraph(res.Lock, m.Start)
	start, stop := m.Start, m.End
	if !res.WindowStart.IsZero() {
		start = res.WindowStart
	}
	if !res.Stop.IsZero() {
		stop = res.Stop
	}
	s.WindowStartS = round3(start.Sub(m.Start).Seconds())
	s.DurationS = round3(stop.Sub(start).Seconds())
	s.Operations = res.Ops
	if s.Operations == 0 {
		s.Operations = m.Counts.Ops
	}
	s.ThroughputPerS = ratio(float64(s.Operations), stop.Sub(start).Seconds())
	s.Errors.Total = m.Counts.Errors
	maps.Copy(s.Errors.ByKind, m.Counts.ErrorsByKind)

	var an Anomalies
	s.Spectrum = map[string][]SpectrumPoint{}
	for _, p := range m.Phases {
		sum := m.Summary(p)
		l := Latency{
			Count: sum.Count, P50: sum.P50, P90: sum.P90, P99: sum.P99, P999: sum.P999, Max: sum.Max,
			CorrectedP99: sum.CorrectedP99, Mean: sum.Mean, CorrectedP999: sum.CorrectedP999,
			CorrectedMax: sum.CorrectedMax, Corrected: sum.HasCorrection, OverRange: sum.OverRange,
		}
		s.Spectrum[string(p)] = spectrum(m.Spectrum(p, sum.HasCorrection))
		if sum.HasCorrection {
			// Measured from the intended start: the figures to read.
			l.ServiceP50, l.ServiceP99 = l.P50, l.P99
			l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean = sum.CorrectedP50, sum.CorrectedP90,
				sum.CorrectedP99, sum.CorrectedP999, sum.CorrectedMax, sum.CorrectedMean
		}
		s.LatencyMs[string(p)] = l
		an.OverRange += sum.OverRange
		an.Negative += sum.Negative
		an.Lost += sum.RecordErrors + sum.MergeDropped
		if t := m.Totals[p]; t != nil && t.Raw != nil {
			h := t.Raw
			if sum.HasCorrection && t.Corrected != nil {
				h = t.Corrected // open model: from the intended start
			}
			if s.Histogram == nil {
				s.Histogram = map[string][]Bucket{}
			}
			for _, b := range metrics.LogBuckets(h, time.Microsecond) {
				s.Histogram[string(p)] = append(s.Histogram[string(p)], Bucket{UpToMs: float64(b.UpTo) / float64(time.Millisecond), Count: b.Count})
			}
		}
	}
	an.UnknownPhase = m.UnknownPhase
	if an != (Anomalies{}) {
		s.Anomalies = &an
	}

	for i, iv := range m.Intervals {
		pt := Point{
			T:              round3(iv.End.Sub(m.Start).Seconds()),
			IntervalS:      round3(iv.Seconds()),
			Ops:            iv.Counts.Ops,
			ThroughputPerS: ratio(float64(iv.Counts.Ops), iv.Seconds()),
			Errors:         iv.Counts.Errors,
			SessionsAlive:  iv.Counts.SessionsAlive,
			Wakeups:        iv.Counts.Wakeups,
			ZKRequests:     iv.Counts.ZKRequests,
		}
		if i < len(res.QueueDepth) {
			d := res.QueueDepth[i]
			pt.QueueDepth = &d
		}
		for p, pp := range iv.Phases {
			if pt.LatencyMs == nil {
				pt.LatencyMs = map[string]PointLatency{}
			}
			pl := PointLatency{Count: pp.Count, P50: pp.P50, P99: pp.P99, Max: pp.Max}
			if pp.HasCorrection {
				pl.P50, pl.P99, pl.Max = pp.CorrectedP50, pp.CorrectedP99, pp.CorrectedMax
			}
			pt.LatencyMs[string(p)] = pl
		}
		s.Timeline = append(s.Timeline, pt)
	}
	for _, e := range res.Events {
		s.Events = append(s.Events, Event{T: round3(e.At.Sub(m.Start).Seconds()), Kind: e.Kind, Detail: e.Detail})
	}
	slices.SortStableFunc(s.Events, func(a, b Event) int { return cmpFloat(a.T, b.T) })
	s.Stages = newStages(res, metrics.Phase(s.MainPhase()))
	return s
}

// MainPhase returns the phase that stands for the scenario's operations:
// acquire when measured, else the first of end_to_end, dequeue, barrier_wait
// and the phases in metrics order that has values; "" when none has.
func (s *Scenario) MainPhase() string {
	for _, p := range []metrics.Phase{metrics.Acquire, metrics.EndToEnd, metrics.Dequeue, metrics.BarrierWait} {
		if _, ok := s.LatencyMs[string(p)]; ok {
			return string(p)
		}
	}
	phases := s.Phases()
	if len(phases) == 0 {
		return ""
	}
	return phases[0]
}

// Phases returns the scenario's phases with values, built-in phases in
// metrics order first, then any others by name.
func (s *Scenario) Phases() []string {
	var out []string
	for _, p := range metrics.Phases() {
		if _, ok := s.LatencyMs[string(p)]; ok {
			out = append(out, string(p))
		}
	}
	var extra []string
	for p := range s.LatencyMs {
		if !slices.Contains(out, p) {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

func spectrum(pts []metrics.SpectrumPoint) []SpectrumPoint {
	out := make([]SpectrumPoint, len(pts))
	for i, p := range pts {
		out[i] = SpectrumPoint{Percentile: p.Percentile, Ms: p.Ms}
	}
	return out
}

// ratio returns a/b rounded to three decimals, zero when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return round3(a / b)
}

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
