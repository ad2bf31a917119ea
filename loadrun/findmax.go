package loadrun

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scenarios"
)

// Bounds of a --find-max search.
const (
	// FindMaxStart is the first rate tried, operations per second.
	FindMaxStart = 50.0
	// FindMaxSteps bounds the runs of a search: doubling, then bisecting.
	FindMaxSteps = 8
	// FindMaxStep is each run's window unless --duration says.
	FindMaxStep = 10 * time.Second
)

// FindMax is a search for the highest constant rate a scenario runs at
// within a threshold (zkherd load --find-max 'acquire.p99<50ms'): each
// step a run at one rate; a rate is served when the threshold holds, the
// checks pass and the achieved rate is within 10% of the target.
type FindMax struct {
	Plan   *Plan
	Target scenarios.Threshold
}

// NewFindMax checks a search: one run (no compare scenario), a threshold.
func NewFindMax(plan *Plan, expr string) (*FindMax, error) {
	t, err := scenarios.ParseThreshold(expr)
	if err != nil {
		return nil, exit.Inputf("{find-max} %s: %v", expr, reason(err))
	}
	if len(plan.Runs) != 1 {
		return nil, exit.Inputf("{find-max} searches one run's rate; %s is a compare scenario of %d runs", plan.Title, len(plan.Runs))
	}
	if err := checkFigures([]scenarios.Run{{Spec: scenarios.Spec{Thresholds: []scenarios.Threshold{t}}}}); err != nil {
		return nil, err
	}
	return &FindMax{Plan: plan, Target: t}, nil
}

// served is whether res ran at rate within the target.
func (f *FindMax) served(res *loadgen.Result, rate float64) (ok bool, line string) {
	s := report.NewScenario(res) // a throwaway: the report's own are built apart
	s.CheckThresholds([]scenarios.Threshold{f.Target})
	th := s.Thresholds[len(s.Thresholds)-1]
	achieved := s.AchievedRatePerS
	ok = th.Passed && s.Checks.Passed && !res.Partial && achieved >= 0.9*rate
	verdict := "within"
	switch {
	case res.Partial:
		verdict = "stopped early"
	case !s.Checks.Passed:
		verdict = "checks failed"
	case !th.Passed:
		verdict = "over the target"
	case achieved < 0.9*rate:
		verdict = "not kept up"
	}
	return ok, fmt.Sprintf("%.0f/s: achieved %.1f/s, %s: %s", rate, achieved, th.Text(), verdict)
}

// FindMax runs the search and prints the curve and the highest rate
// served; the report holds every step as a scenario of its own.
func (r *Runner) FindMax(ctx context.Context, f *FindMax) error {
	defer r.closeEvents()
	plan := f.Plan
	env, err := r.Target.Open(ctx, plan, plan.clients())
	if err != nil {
		return err
	}
	defer env.Close()
	var (
		results []*loadgen.Result
		curve   []string
		best    = -1.0
		partial bool
	)
	out := r.show(ctx, plan, env.Where(), func(ctx context.Context, sink sink) Outcome {
		lo, hi, rate := 0.0, math.Inf(1), FindMaxStart
		for i := range FindMaxSteps {
			step := *plan
			spec := plan.Spec.WithArrival(scenarios.Constant, rate)
			if spec.Duration == 0 || spec.Ops > 0 {
				spec.Duration, spec.Ops = FindMaxStep, 0
			}
			spec.Name = fmt.Sprintf("%s@%.0f/s", plan.Spec.Name, rate)
			step.Spec, step.Runs = spec, spec.Runs()
			x := execution{announce: func(int, scenarios.Run) string {
				return fmt.Sprintf("find-max %d of at most %d: %.0f operations/s", i+1, FindMaxSteps, rate)
			}}
			o := x.run(ctx, env.LoadOptions(), &step, sink)
			if o.Err != nil {
				return Outcome{Results: results, Err: o.Err}
			}
			if len(o.Results) == 0 || o.Partial {
				partial = true
				results = append(results, o.Results...)
				break
			}
			res := o.Results[0]
			results = append(results, res)
			ok, line := f.served(res, rate)
			curve = append(curve, line)
			sink.Notice("find-max " + line)
			if ok {
				lo, best = rate, rate
			} else {
				hi = rate
			}
			next := rate * 2
			if !math.IsInf(hi, 1) {
				next = (lo + hi) / 2
			}
			if math.IsInf(hi, 1) && lo == 0 {
				next = rate / 2
			}
			if !math.IsInf(hi, 1) && hi-lo <= 0.1*max(lo, FindMaxStart/2) {
				break // within 10%
			}
			rate = math.Round(next)
		}
		return Outcome{Results: results, Partial: partial}
	})
	r.endEvents()
	if out.Err != nil && len(out.Results) == 0 {
		return runError(out.Err)
	}
	if len(out.Results) == 0 {
		return ctx.Err()
	}
	title := fmt.Sprintf("%s: highest rate within %s", plan.Spec.Name, f.Target.Expr)
	rep := r.report(title, env, plan.Out)
	run := rep.Build(out.Results, out.Partial)
	run.FindMax = &report.FindMax{Target: f.Target.Expr, Curve: curve, BestPerS: max(best, 0)}
	if err := rep.Finish(r.Stdout, run, nil); err != nil || best > 0 {
		return err
	}
	return &exit.Error{Code: exit.CheckFailed, Err: fmt.Errorf("no rate tried was within %s", f.Target.Expr)}
}
