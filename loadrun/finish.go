package loadrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
)

// Report is what Finish needs beyond the results.
type Report struct {
	// Title names what was run.
	Title string
	// Server is the connect string the runs used; Local is set when zkherd
	// started the ensemble.
	Server string
	Local  bool
	// Version is zkherd's version, written into the report.
	Version string
	// Out is the report directory; "" for the summary only.
	Out string
}

// Build turns the runs' results into the report.
func (r Report) Build(results []*loadgen.Result, partial bool) *report.Run {
	rep := &report.Run{
		ZkherdVersion: r.Version,
		Title:         r.Title,
		Partial:       partial,
		Server:        r.Server,
		LocalEnsemble: r.Local,
	}
	for _, res := range results {
		if rep.RunID == "" {
			rep.RunID = res.RunID
			rep.StartedAt = res.Start
		}
		sc := report.NewScenario(scenarioInfo(res), res.Metrics)
		sc.CheckThresholds(res.Run.Thresholds)
		rep.Scenarios = append(rep.Scenarios, sc)
	}
	return rep
}

// Finish prints rep's summary on w, writes the report directory (if
// r.Out) and returns the exit: runErr (why the runs stopped early) first,
// then failed checks (exit.CheckFailed), then a partial run
// (exit.Interrupted).
func (r Report) Finish(w io.Writer, rep *report.Run, runErr error) error {
	width := report.Width
	if !IsTerminal(w) {
		width = 0 // one line per item: files and scripts
	}
	if err := report.WriteSummaryWidth(w, rep, width); err != nil {
		return err
	}
	if r.Out != "" {
		if err := report.WriteDir(r.Out, rep); err != nil {
			return exit.AsUsage(err)
		}
		where := filepath.Join(r.Out, "report.html")
		if _, err := os.Stat(where); err != nil {
			where = filepath.Join(r.Out, "report.json")
		}
		fmt.Fprintf(w, "\nreport: %s\n", where)
	}
	if runErr != nil {
		return runErr
	}
	return exitFor(rep)
}

// exitFor is the exit of a report: checks failed, thresholds crossed,
// partial, or fine.
func exitFor(rep *report.Run) error {
	if failed := failedChecks(rep); len(failed) > 0 {
		return &exit.Error{Code: exit.CheckFailed, Err: fmt.Errorf("correctness checks failed: %s", strings.Join(failed, "; "))}
	}
	if crossed := crossedThresholds(rep); len(crossed) > 0 {
		return &exit.Error{Code: exit.CheckFailed, Err: fmt.Errorf("thresholds crossed: %s", strings.Join(crossed, "; "))}
	}
	if rep.Partial {
		return &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted: the run was stopped early and its report is marked partial")}
	}
	return nil
}

// failedChecks lists the scenarios whose checks failed, with their first
// violation.
func failedChecks(r *report.Run) []string {
	var out []string
	for _, s := range r.Scenarios {
		if !s.Checks.Passed {
			v := "failed"
			if len(s.Checks.Violations) > 0 {
				v = s.Checks.Violations[0]
			}
			out = append(out, fmt.Sprintf("%s: %s", s.Name, v))
		}
	}
	return out
}

// crossedThresholds lists the thresholds a run did not meet, by scenario.
func crossedThresholds(r *report.Run) []string {
	var out []string
	for _, s := range r.Scenarios {
		for _, t := range s.CrossedThresholds() {
			out = append(out, fmt.Sprintf("%s: %s", s.Name, t.Text()))
		}
	}
	return out
}

// scenarioInfo is what the report needs from a loadgen result beyond its
// metrics.
func scenarioInfo(res *loadgen.Result) report.ScenarioInfo {
	info := report.ScenarioInfo{
		Name:         res.Run.Name,
		Recipe:       string(res.Run.Recipe),
		Clients:      res.Run.Clients,
		Partial:      res.Partial,
		WindowStart:  res.WindowStart,
		WindowStop:   res.Stop,
		Ops:          res.Ops,
		TargetRate:   res.TargetRate,
		AchievedRate: res.AchievedRate,
		Herd:         report.Herd(res.Herd),
		Checks:       report.Checks(res.Checks),
		Requests:     res.Requests,
		QueueDepth:   res.QueueDepth,
		Notes:        res.Notes,
	}
	for _, e := range res.Events {
		info.Events = append(info.Events, report.TimedEvent{At: e.At, Kind: e.Kind, Detail: e.Detail})
	}
	info.Faults, info.Fencing = faultsInfo(res)
	return info
}

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
