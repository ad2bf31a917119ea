package loadrun

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
)

// Plan is a validated load run: what to run and where the report goes.
type Plan struct {
	// Spec is the scenario with the overrides applied.
	Spec scenarios.Spec
	// Runs are Spec's runs (one per compare step), every default applied.
	Runs []scenarios.Run
	// Out is the report directory, absolute; "" for none.
	Out string
	// Title names the run in the summary and the report.
	Title string
	// RunID names the run (its namespace and report); every run of the
	// plan uses it in turn.
	RunID string
	// AbortOnFail stops a run at the first progress that crosses one of
	// its thresholds for good (--abort-on-fail; see crossedForGood).
	AbortOnFail bool
}

// DefaultOut is the report directory of a run given none:
// ./zkherd-load-<run id>.
func DefaultOut(runID string) string { return "zkherd-load-" + runID }

// NewPlan looks the scenario up (a built-in name or a YAML file), applies
// the overrides, validates the result, picks the run id and checks that
// the report directory out (DefaultOut when "") can be written. Nothing is
// created.
func NewPlan(scenario string, ov scenarios.Overrides, out string) (*Plan, error) {
	spec, err := scenarios.Lookup(scenario)
	if err != nil {
		return nil, ScenarioError(err)
	}
	spec = ov.Apply(spec)
	if err := spec.Validate(); err != nil {
		return nil, ScenarioError(err)
	}
	p := &Plan{Spec: spec, Runs: spec.Runs(), Title: spec.Name, RunID: loadgen.NewRunID()}
	if err := checkFigures(p.Runs); err != nil {
		return nil, err
	}
	if err := checkRamp(p.Runs, ov.RampUp > 0); err != nil {
		return nil, err
	}
	if out == "" {
		out = DefaultOut(p.RunID)
	}
	if p.Out, err = CheckOutDir(out); err != nil {
		return nil, err
	}
	return p, nil
}

// clients is how many clients each run of the plan opens.
func (p *Plan) clients() int { return p.Spec.Effective().Clients }

// checkFigures refuses a threshold on a figure no run measures (a phase
// name that is no phase), before anything runs: k6 rejects an unknown
// metric at start too. It would otherwise run the whole load and fail it
// with the status of a regression.
func checkFigures(runs []scenarios.Run) error {
	var names []string
	for _, ph := range loadgen.Phases() {
		names = append(names, string(ph))
	}
	for _, r := range runs {
		for _, t := range r.Thresholds {
			phase, stat, ok := t.Latency()
			if ok && !slices.Contains(names, phase) {
				return exit.Usagef("threshold %q: no figure %s.%s; latencies are PHASE.STAT with PHASE one of %s (or use throughput, errors, error_rate)",
					t.Expr, phase, stat, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// checkRamp refuses a run whose ramp-up would take longer than
// scenarios.MaxRampTime (--clients 1000000: most likely a typo), unless
// the user set the rate (rateGiven: --ramp-up) and so knows the time.
func checkRamp(runs []scenarios.Run, rateGiven bool) error {
	for _, r := range runs {
		ramp := scenarios.RampFor(r)
		if d := ramp.Done(); d > scenarios.MaxRampTime && !rateGiven {
			return exit.Inputf("{clients} %d: opening them at %.0f sessions/s takes %v before the window opens; give {ramp-up} RATE to open them faster (or to accept the wait), or fewer {clients}",
				r.Clients, ramp.Rate, d.Round(time.Second))
		}
	}
	return nil
}

// ScenarioError turns a scenarios error into a user error: every line of a
// YAML error list, each with file:line.
func ScenarioError(err error) error {
	var list scenarios.ErrorList
	if errors.As(err, &list) && len(list) > 1 {
		return exit.Usagef("scenario has %d mistakes:\n  %s", len(list), strings.ReplaceAll(list.Error(), "\n", "\n  "))
	}
	return exit.AsUsage(reason(err))
}

// CheckOutDir makes sure the report can be written, before the run
// starts: dir is an empty or absent directory whose nearest existing
// ancestor is writable. Nothing is created. It returns dir made absolute.
func CheckOutDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", exit.Inputf("{out} %s: %v", dir, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err == nil && !st.IsDir():
		return "", exit.Inputf("{out} %s: exists and is not a directory", dir)
	case err == nil:
		if err := probeWritable(abs); err != nil {
			return "", exit.Inputf("{out} %s: cannot write there: %v", dir, err)
		}
		return abs, nil
	case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return "", exit.Inputf("{out} %s: %v", dir, err)
	}
	parent := filepath.Dir(abs)
	for {
		st, err := os.Stat(parent)
		if err == nil {
			if !st.IsDir() {
				return "", exit.Inputf("{out} %s: %s is not a directory", dir, parent)
			}
			if err := probeWritable(parent); err != nil {
				return "", exit.Inputf("{out} %s: cannot create it in %s: %v", dir, parent, err)
			}
			return abs, nil
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", exit.Inputf("{out} %s: %v", dir, err)
		}
		next := filepath.Dir(parent)
		if next == parent {
			return "", exit.Inputf("{out} %s: no existing parent directory", dir)
		}
		parent = next
	}
}

// probeWritable creates and removes a temporary file in dir.
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".zkherd-probe-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// lagsMembers reports whether a run of the plan has faults that act on
// the links between members (lag-member).
func (p *Plan) lagsMembers() bool {
	for _, run := range p.Runs {
		for _, f := range run.Faults {
			if f.Kind.NeedsQuorumProxies() {
				return true
			}
		}
	}
	return false
}
