package loadrun

import (
	"context"
	"io"

	"github.com/zkherd/zkherd/report"
)

// Runner runs load plans for a command: where they go, where its output
// goes, how progress is shown.
type Runner struct {
	Target Target
	// Stdout receives the summary; Stderr progress and notices.
	Stdout, Stderr io.Writer
	// Version is zkherd's version, written into reports.
	Version string
	// Display shows the runs while they go; nil prints a progress line on
	// Stderr.
	Display Display
	// Taps receive everything the display's sink does, for the whole run
	// (ramp-up, window, drain): the metrics endpoint and the JSON stream.
	// A tap that is an IntervalSink also gets every closed interval.
	Taps []Sink
	// Joiners is how processes this one launches reach the servers.
	Joiners Joiners
}

// display is the Display with the taps joined to its sink.
func (r *Runner) display() Display {
	d := r.Display
	if d == nil {
		d = lineDisplay(r.Stderr)
	}
	if len(r.Taps) == 0 {
		return d
	}
	return func(ctx context.Context, plan *Plan, where Where, exec func(context.Context, Sink) Outcome) Outcome {
		return d(ctx, plan, where, func(ctx context.Context, sink Sink) Outcome {
			return exec(ctx, tee{display: sink, taps: r.Taps})
		})
	}
}

// Run runs plan on the target, prints the summary, writes the report and
// returns the exit (see Report.Finish).
func (r *Runner) Run(ctx context.Context, plan *Plan) error {
	env, err := r.Target.Open(ctx, plan, plan.clients())
	if err != nil {
		return err
	}
	defer env.Close()
	var early *report.Run // the report as written when the runs ended
	out := r.display()(ctx, plan, env.Where(), func(ctx context.Context, sink Sink) Outcome {
		o := Execute(ctx, env, plan, sink)
		// Written now, not once the display is done: the dashboard waits
		// for q, and the terminal may be gone by then.
		if plan.Out != "" && len(o.Results) > 0 {
			rep := r.report(plan.Title, env, plan.Out)
			if b := rep.Build(o.Results, o.Partial); report.WriteDir(plan.Out, b) == nil {
				early = b
			}
		}
		return o
	})
	if out.Err != nil && len(out.Results) == 0 {
		return runError(out.Err)
	}
	if len(out.Results) == 0 {
		return ctx.Err()
	}
	// A run that measured everything but could not clean up (its namespace
	// left behind) still gets its report; the error comes first in the
	// exit.
	var runErr error
	if out.Err != nil {
		runErr = runError(out.Err)
	}
	rep := r.report(plan.Title, env, plan.Out)
	built := rep.Build(out.Results, out.Partial)
	if early != nil && early.Partial == built.Partial && len(early.Scenarios) == len(built.Scenarios) {
		built, rep.Written = early, true
	}
	return rep.Finish(r.Stdout, built, runErr)
}

func (r *Runner) report(title string, env *Env, out string) Report {
	return Report{Title: title, Server: env.Label(), Local: env.Local, Version: r.Version, Out: out}
}
