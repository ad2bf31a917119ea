package report

import (
	"fmt"
	"io"
	"time"

	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
)

// Stage is one step of a rate schedule as the run went (--rate
// 100:30s,500:30s): the rate asked for, the rate achieved, and the main
// phase's latency in its worst interval.
type Stage struct {
	StartS       float64 `json:"start_s"` // since the window's start
	DurationS    float64 `json:"duration_s"`
	TargetPerS   float64 `json:"target_per_s"`
	AchievedPerS float64 `json:"achieved_per_s"`
	Operations   int64   `json:"operations"`
	// WorstP99Ms is the highest p99 of the main phase over the stage's
	// metrics intervals (from the intended start); 0 with no operation.
	WorstP99Ms float64 `json:"worst_p99_ms"`
}

// newStages cuts the window's intervals along the run's schedule; an
// interval belongs to the stage its middle falls in. nil without one.
func newStages(res *loadgen.Result, main metrics.Phase) []Stage {
	st := res.Run.Arrival.Stages
	m := res.Metrics
	if len(st) == 0 || m == nil || res.WindowStart.IsZero() {
		return nil
	}
	out := make([]Stage, 0, len(st))
	from := res.WindowStart
	for _, s := range st {
		to := from.Add(s.Duration)
		if !res.Stop.IsZero() && to.After(res.Stop) {
			to = res.Stop
		}
		g := Stage{StartS: round3(from.Sub(res.WindowStart).Seconds()), DurationS: round3(to.Sub(from).Seconds()), TargetPerS: s.Rate}
		for _, iv := range m.Intervals {
			mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
			if mid.Before(from) || !mid.Before(to) {
				continue
			}
			g.Operations += iv.Counts.Ops
			if p, ok := iv.Phases[main]; ok && p.Count > 0 {
				p99 := p.P99
				if p.HasCorrection {
					p99 = p.CorrectedP99
				}
				g.WorstP99Ms = max(g.WorstP99Ms, round3(p99))
			}
		}
		g.AchievedPerS = round3(ratio(float64(g.Operations), to.Sub(from).Seconds()))
		out = append(out, g)
		if !to.Before(res.Stop) && !res.Stop.IsZero() {
			break // the run ended in this stage
		}
		from = to
	}
	return out
}

// writeStages prints a scheduled run's stages, one line each.
func writeStages(w io.Writer, s *Scenario) {
	if len(s.Stages) == 0 {
		return
	}
	fmt.Fprintln(w, "stages:")
	for i, g := range s.Stages {
		fmt.Fprintf(w, "  %d  %6s from %-6s target %6s/s  achieved %8s/s  %s p99 (worst second) %s\n", i+1,
			fmtSeconds(g.DurationS), (time.Duration(g.StartS * float64(time.Second))).Round(100*time.Millisecond).String(),
			fmtNum(g.TargetPerS, 0), fmtNum(g.AchievedPerS, 1), s.MainPhase(), format.Ms(g.WorstP99Ms))
	}
}
