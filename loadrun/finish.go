package loadrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
	// Written says Out holds the report already: Run writes it as soon as
	// the runs end, before the display asks anything.
	Written bool
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
		rep.Scenarios = append(rep.Scenarios, report.NewScenario(res))
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
	// The files first, then the summary: a terminal that has gone (an
	// SSH drop, a killed tmux: EIO) or a reader that left (EPIPE) loses
	// the summary, never the report or the exit status.
	if r.Out != "" && !r.Written {
		if err := report.WriteDir(r.Out, rep); err != nil {
			return exit.AsUsage(err)
		}
	}
	_ = report.WriteSummaryWidth(w, rep, width)
	if r.Out != "" {
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
			switch {
			case len(s.Checks.Violations) > 0:
				v = s.Checks.Violations[0]
			case len(s.Checks.NotChecked) > 0:
				v = "not checked: " + s.Checks.NotChecked[0]
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
