package loadrun

import (
	"context"
	"io"
	"sync"

	"github.com/zkherd/zkherd/report"
)

// Runner runs load plans for a command: where they go, where its output
// goes. It runs one mode call (Run, Sweep, FindMax, Start, Join or Do)
// and publishes what it says while it goes to its subscribers
// (Subscribe, events.go).
type Runner struct {
	Target Target
	// Stdout receives the summary; Stderr the few lines a mode prints
	// outside its events (a distributed run's waiting, a sweep's model).
	Stdout, Stderr io.Writer
	// Version is zkherd's version, written into reports.
	Version string
	// TerminalFree, if set, is waited for after the last event and
	// before the summary is written: the subscriber that draws on the
	// terminal (the dashboard, the progress line) closes it once it has
	// given the terminal back.
	TerminalFree <-chan struct{}
	// Joiners is how processes this one launches reach the servers.
	Joiners Joiners

	once   sync.Once
	events *hub
}

// Run runs plan on the target, prints the summary, writes the report and
// returns the exit (see Report.Finish).
func (r *Runner) Run(ctx context.Context, plan *Plan) error {
	defer r.closeEvents()
	env, err := r.Target.Open(ctx, plan, plan.clients())
	if err != nil {
		return err
	}
	defer env.Close()
	var early *report.Run // the report as written when the runs ended
	out := r.show(ctx, plan, env.Where(), func(ctx context.Context, sink sink) Outcome {
		o := execution{}.run(ctx, env.LoadOptions(), plan, sink)
		// Written now, before EventEnded: the dashboard waits for q, and
		// the terminal may be gone by then.
		if plan.Out != "" && len(o.Results) > 0 {
			rep := r.report(plan.Title, env, plan.Out)
			if b := rep.Build(o.Results, o.Partial); report.WriteDir(plan.Out, b) == nil {
				early = b
			}
		}
		return o
	})
	r.endEvents()
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
