package report

import (
	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
)

// Threshold is a threshold checked against a scenario's figure.
type Threshold struct {
	// Expr is the threshold as written, such as "acquire.p99<500ms".
	Expr string `json:"expr"`
	// Value is the figure it was checked against (milliseconds for
	// latencies); Unit how to read it.
	Value float64 `json:"value"`
	// Measured is false when the run has no such figure (a phase it did not
	// measure): the threshold then fails.
	Measured bool `json:"measured"`
	Passed   bool `json:"passed"`
}

// CheckThresholds checks each threshold that applies to s against its
// figures and records the outcomes in s.Thresholds.
func (s *Scenario) CheckThresholds(ts []scenarios.Threshold) {
	for _, t := range ts {
		if !t.AppliesTo(s.Name) {
			continue
		}
		v, ok := s.figure(t)
		s.Thresholds = append(s.Thresholds, Threshold{Expr: t.Expr, Value: round3(v), Measured: ok, Passed: ok && t.Holds(v)})
	}
}

// figure returns the value of a threshold's metric in s.
func (s *Scenario) figure(t scenarios.Threshold) (float64, bool) {
	if f, ok := figures.Lookup(t.Metric); ok {
		v := s.Herd.Figure(f.Key)
		return v, v >= 0 && f.AppliesTo(s.recipe())
	}
	switch t.Metric {
	case scenarios.MetricThroughput:
		return s.ThroughputPerS, true
	case scenarios.MetricErrors:
		return float64(s.Errors.Total), true
	case scenarios.MetricErrorRate:
		return ratio(float64(s.Errors.Total), float64(s.Operations)), s.Operations > 0
	}
	phase, stat, _ := t.Latency()
	l, ok := s.LatencyMs[phase]
	if !ok || l.Count == 0 {
		return 0, false
	}
	switch stat {
	case "p50":
		return l.P50, true
	case "p90":
		return l.P90, true
	case "p99":
		return l.P99, true
	case "p99.9":
		return l.P999, true
	case "max":
		return l.Max, true
	case "mean":
		return l.Mean, true
	}
	return 0, false
}

// CrossedThresholds returns the thresholds s did not meet.
func (s *Scenario) CrossedThresholds() []Threshold {
	var out []Threshold
	for _, t := range s.Thresholds {
		if !t.Passed {
			out = append(out, t)
		}
	}
	return out
}

// Text says how the threshold went: "acquire.p99<500ms: 123ms ok",
// "throughput>300: 280.3 CROSSED".
func (t Threshold) Text() string { return t.Expr + ": " + t.verdict() }

// check is the threshold as one of the scenario's checks: 1 when crossed
// (a figure the run did not measure crosses it: the run cannot show it
// holds), 0 when met.
func (t Threshold) check() loadgen.CheckOutcome {
	o := loadgen.CheckOutcome{Key: "threshold:" + t.Expr, Label: t.Expr, Failure: true,
		Group: loadgen.GroupThresholds, Text: t.verdict()}
	if !t.Passed {
		o.Count = 1
	}
	return o
}

// verdict is the figure and whether it met the threshold: "123ms ok".
func (t Threshold) verdict() string {
	if !t.Measured {
		return "not measured in this run, CROSSED"
	}
	st, err := scenarios.ParseThreshold(t.Expr)
	val := fmtNum(t.Value, 1)
	if _, _, lat := st.Latency(); err == nil && lat {
		val = format.Ms(t.Value)
	} else if err == nil && st.Metric == scenarios.MetricErrorRate {
		val = fmtNum(t.Value, 3)
	}
	if t.Passed {
		return val + " ok"
	}
	return val + " CROSSED"
}

// CheckThresholds checks ts against every scenario of r.
func (r *Run) CheckThresholds(ts []scenarios.Threshold) {
	for _, s := range r.Scenarios {
		s.CheckThresholds(ts)
	}
}

// Failed reports whether a check failed or a threshold was crossed in r.
func (r *Run) Failed() bool {
	for _, s := range r.Scenarios {
		if !s.Checks.Passed || len(s.CrossedThresholds()) > 0 {
			return true
		}
	}
	return false
}

// CheckList is every check of the scenario, the one list the summary,
// report.json (check_results), report.html, the dashboard and the
// metrics endpoint read: the run's counted checks (loadgen's checkList),
// the oracle's linearizability verdict, then each threshold.
func (s *Scenario) CheckList() []loadgen.CheckOutcome {
	out := s.Checks.List(scenarios.Recipe(s.Recipe))
	if s.Linearizability != nil {
		out = append(out, loadgen.LinearizabilityCheck(s.Linearizability))
	}
	for _, t := range s.Thresholds {
		out = append(out, t.check())
	}
	return out
}

// ChecksOf is the check list of a run's result, as its report has it.
func ChecksOf(res *loadgen.Result) []loadgen.CheckOutcome { return NewScenario(res).CheckList() }
