package main

import (
	"context"
	"io"

	"github.com/zkherd/zkherd/loadrun"
)

// runDistributed runs zkherd load with --join, --processes or --sweep
// (mode, as loadrun.Request.Mode says). None shows the dashboard.
func runDistributed(ctx context.Context, mode loadrun.Mode, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	o.noTUI = true
	q := &o.req
	switch mode {
	case loadrun.ModeSweep:
		counts, err := loadrun.ParseSweep(q.Sweep)
		if err != nil {
			return err
		}
		if q.ClientsGiven {
			return usageErr("--sweep sets the clients of each run; drop --clients")
		}
		ov, err := o.overrides(g)
		if err != nil {
			return err
		}
		sw, err := loadrun.NewSweep(q.Scenario, counts, ov, q.Out)
		if err != nil {
			return err
		}
		r, err := o.runner(g, stdout, stderr)
		if err != nil {
			return err
		}
		return r.Sweep(ctx, sw)
	case loadrun.ModeJoin:
		// The plan comes from the run joined.
		if g.server == "" {
			return usageErr("--join needs --server: the servers of the run to join")
		}
		if err := g.checkAuth(); err != nil {
			return err
		}
		r, err := o.runner(g, stdout, stderr)
		if err != nil {
			return err
		}
		return r.Join(ctx, q.Join, loadrun.Distributed{JoinTimeout: q.JoinTimeout})
	}
	plan, r, err := o.plan(g, stdout, stderr)
	if err != nil {
		return err
	}
	return r.Start(ctx, plan, loadrun.Distributed{Processes: q.Processes, RunID: q.RunID, JoinTimeout: q.JoinTimeout})
}
