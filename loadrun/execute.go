package loadrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// Outcome is what executing a plan gave.
type Outcome struct {
	// Results are the runs done, in plan order.
	Results []*loadgen.Result
	// Partial is set when a result is partial or the runs were cut short
	// (ctx ended).
	Partial bool
	// Err is why the runs stopped early, if they did not end as planned.
	Err error
}

// stepFunc runs run i of a plan with opts: loadgen.Run, or one step of a
// distributed run. cut says the run was cut short (ctx ended): no run
// follows it.
type stepFunc func(ctx context.Context, i int, run scenarios.Run, opts loadgen.Options) (res *loadgen.Result, cut bool, err error)

// execution is how Execute runs a plan.
type execution struct {
	// step defaults to loadgen.Run.
	step stepFunc
	// announce says what starts, for a log; nil says "run i of n" when the
	// plan has more than one run.
	announce func(i int, run scenarios.Run) string
}

// sink is where the runs of a plan report: the Runner's hub, which
// publishes it all as events (events.go).
type sink interface {
	Starting(i int, run scenarios.Run, line string)
	Progress(loadgen.Progress)
	Notice(line string)
	// LiveDetail says a subscriber wants every phase in each progress.
	LiveDetail() bool
	// intervalHook is run name's OnInterval, nil when nobody wants them.
	intervalHook(name string) func(metrics.Phase, *metrics.PhaseInterval)
}

// run runs every run of plan in turn, reporting to sink, and stops after
// one that was cut short (ctx ended) or failed.
func (x execution) run(ctx context.Context, opts loadgen.Options, plan *Plan, sink sink) Outcome {
	step := x.step
	if step == nil {
		step = func(ctx context.Context, _ int, run scenarios.Run, opts loadgen.Options) (*loadgen.Result, bool, error) {
			res, err := loadgen.Run(ctx, run, opts)
			return res, err == nil && res.Partial, err
		}
	}
	announce := x.announce
	if announce == nil {
		announce = func(i int, run scenarios.Run) string {
			if len(plan.Runs) < 2 {
				return ""
			}
			return fmt.Sprintf("run %d of %d: %s (%s, %d clients)", i+1, len(plan.Runs), run.Name, run.Recipe, run.Clients)
		}
	}
	opts.Progress = sink.Progress
	if opts.RunID == "" {
		opts.RunID = plan.RunID // the report directory is named after it
	}
	opts.Logf = func(format string, args ...any) { sink.Notice(fmt.Sprintf(format, args...)) }
	opts.ProgressPhases = sink.LiveDetail()
	var out Outcome
	for i, run := range plan.Runs {
		if ctx.Err() != nil {
			out.Partial = true
			return out
		}
		sink.Starting(i, run, announce(i, run))
		runOpts := opts
		runOpts.OnInterval = sink.intervalHook(run.Name)
		stepCtx := ctx
		var watch *abortWatch
		if plan.AbortOnFail && len(run.Thresholds) > 0 {
			wctx, stop := context.WithCancel(ctx)
			defer stop()
			watch = &abortWatch{thresholds: run.Thresholds, stop: stop, name: opts.Name}
			stepCtx = wctx
			runOpts.ProgressPhases = true // thresholds on any phase's max
			runOpts.Progress = func(pr loadgen.Progress) { sink.Progress(pr); watch.see(pr) }
		}
		res, cut, err := step(stepCtx, i, run, runOpts)
		if why := watch.reasonOf(); why != "" {
			sink.Notice(why)
			if res != nil {
				res.Notes = append(res.Notes, why)
				out.Results = append(out.Results, res)
			}
			out.Partial = true
			return out
		}
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				out.Partial = true
				return out
			}
			out.Err = err
			if res != nil && res.Metrics != nil {
				out.Results = append(out.Results, res) // measured; only the clean-up failed
			}
			return out
		}
		out.Results = append(out.Results, res)
		out.Partial = out.Partial || res.Partial
		if cut {
			out.Partial = true
			return out
		}
	}
	return out
}

// Where is where a plan's runs go, as a subscriber needs it (EventPlan): what anything
// that connects uses (the connect string and the TLS settings), and the
// label people read, which may carry more than an address (the local
// ensemble's --server-config) and is never parsed.
type Where struct {
	Server connstr.ConnectString
	TLS    *tls.Config
	Label  string
}

// runError is a run's failure for the user.
func runError(err error) error {
	var ee *exit.Error
	if errors.As(err, &ee) || errors.Is(err, context.Canceled) {
		return err
	}
	return exit.AsUsage(reason(err))
}
