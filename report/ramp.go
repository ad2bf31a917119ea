package report

import (
	"fmt"
	"io"

	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/loadgen"
)

// Ramp is what a scenario's ramp-up did before its window: sessions
// opening on the schedule and, for closed loops, the clients' first
// operations, measured apart from the window's.
type Ramp struct {
	DurationS    float64 `json:"duration_s"`
	Sessions     int     `json:"sessions"`
	SessionsPerS float64 `json:"sessions_per_s"`
	Operations   int64   `json:"operations"`
	// ThroughputPerS is Operations per second of the ramp-up.
	ThroughputPerS float64 `json:"throughput_per_s"`
	Errors         int64   `json:"errors"`
	// LatencyMs sums up the ramp-up's phases (connect among them).
	LatencyMs map[string]Latency `json:"latency_ms,omitempty"`
}

// newRamp converts the generator's ramp-up figures; nil for none.
func newRamp(r *loadgen.Ramp) *Ramp {
	if r == nil {
		return nil
	}
	d := r.Duration.Seconds()
	out := &Ramp{DurationS: round3(d), Sessions: r.Sessions, SessionsPerS: round3(ratio(float64(r.Sessions), d)),
		Operations: r.Ops, ThroughputPerS: round3(ratio(float64(r.Ops), d))}
	if m := r.Metrics; m != nil {
		out.Errors = m.Counts.Errors
		out.LatencyMs = map[string]Latency{}
		for _, p := range m.Phases {
			sum := m.Summary(p)
			out.LatencyMs[string(p)] = Latency{Count: sum.Count, P50: sum.P50, P90: sum.P90, P99: sum.P99,
				P999: sum.P999, Max: sum.Max, Mean: sum.Mean}
		}
	}
	return out
}

// writePhases prints the run's phases apart: the ramp-up (sessions, and
// the operations closed loops did meanwhile), the measured window the
// figures above are about, and the drain.
func writePhases(w io.Writer, s *Scenario) {
	r := s.Ramp
	if r == nil {
		return
	}
	items := []string{fmt.Sprintf("ramp-up %.1fs: %s sessions (%s/s)", r.DurationS, format.Count(int64(r.Sessions)), fmtNum(r.SessionsPerS, 0))}
	if r.Operations > 0 {
		it := fmt.Sprintf("%s operations (%s/s)", format.Count(r.Operations), fmtNum(r.ThroughputPerS, 1))
		if l, ok := r.LatencyMs[s.MainPhase()]; ok && l.Count > 0 {
			it += fmt.Sprintf(", %s p99 %s", s.MainPhase(), format.Ms(l.P99))
		}
		items = append(items, it)
	}
	items = append(items, fmt.Sprintf("window %.1fs: %s/s", s.DurationS, fmtNum(s.ThroughputPerS, 1)))
	if s.DrainS > 0 {
		items = append(items, "drain "+fmtSeconds(s.DrainS))
	}
	fmt.Fprint(w, wrapItems("phases: ", items, widthOf(w)))
}
