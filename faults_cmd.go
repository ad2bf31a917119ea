package main

import (
	"fmt"
	"time"

	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
)

// faultsInfo turns a run's faults summary and fencing figures into the
// report's.
func faultsInfo(res *loadgen.Result) (*report.Faults, *report.Fencing) {
	var f *report.Faults
	if s := res.Faults; s != nil {
		f = &report.Faults{
			Occurrences: s.Occurrences, Skipped: s.Skipped, SessionsExpired: s.SessionsExpired,
			LeaderKills: s.LeaderKills, MemberKills: s.MemberKills, Pauses: s.Pauses,
			ConnectionsCut: s.ConnectionsCut, CutsOnCreate: s.CutsOnCreate, CutsOnDelete: s.CutsOnDelete,
			CutsOnSetData: s.CutsOnSetData, CutsOnMulti: s.CutsOnMulti,
			ConnectionsDropped: s.ConnectionsDropped, Delays: s.Delays,
			Lags: s.Lags, LagSeconds: s.LagTime.Seconds(),
			ForeignDeletes: s.ForeignDeletes, ForeignWrites: s.ForeignWrites, ForeignRefused: s.ForeignRefused,
			SessionTimeoutMs: ms(s.SessionTimeout), Problems: s.Problems,
		}
		for _, st := range s.Stats() {
			f.Recovery = append(f.Recovery, report.Recovery{
				What: st.What, Description: faults.Describe(st.What), Count: st.Count, Recovered: st.Recovered,
				MeanMs: ms(st.Mean), P50Ms: ms(st.P50), MaxMs: ms(st.Max),
			})
		}
	}
	var fe *report.Fencing
	if s := res.Fencing; s != nil {
		fe = &report.Fencing{Writes: s.Writes, Rejected: s.Rejected, WriteErrors: s.WriteErrors, OverlapCount: s.OverlapCount, IgnoreLost: s.IgnoreLost}
		start := res.Start
		if res.Metrics != nil {
			start = res.Metrics.Start
		}
		for _, o := range s.Overlaps {
			fe.Overlaps = append(fe.Overlaps, report.Overlap{
				Lock: o.Lock, StaleToken: o.StaleToken, NewerToken: o.NewerToken,
				StaleSession: fmt.Sprintf("0x%x", o.StaleSession), NewerSession: fmt.Sprintf("0x%x", o.NewerSession),
				T: float64(o.At.Sub(start).Milliseconds()) / 1000, Rejected: o.Rejected, StaleLost: o.StaleLost,
			})
		}
	}
	return f, fe
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
