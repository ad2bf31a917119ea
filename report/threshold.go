package report

import (
	"fmt"
	"io"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/format"
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

// Text says how the threshold went, for summaries: "acquire.p99<500ms:
// 123ms ok", "throughput>300: 280.3 CROSSED".
func (t Threshold) Text() string {
	if !t.Measured {
		return t.Expr + ": not measured in this run, CROSSED"
	}
	st, err := scenarios.ParseThreshold(t.Expr)
	val := fmtNum(t.Value, 1)
	if _, _, lat := st.Latency(); err == nil && lat {
		val = format.Ms(t.Value)
	} else if err == nil && st.Metric == scenarios.MetricErrorRate {
		val = fmtNum(t.Value, 3)
	}
	if t.Passed {
		return fmt.Sprintf("%s: %s ok", t.Expr, val)
	}
	return fmt.Sprintf("%s: %s CROSSED", t.Expr, val)
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

func writeThresholds(w io.Writer, s *Scenario) {
	if len(s.Thresholds) == 0 {
		return
	}
	var items []string
	for _, t := range s.Thresholds {
		items = append(items, t.Text())
	}
	fmt.Fprint(w, wrapItems("thresholds: ", items, widthOf(w)))
}
