package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/zkherd/zkherd/distrib"
	"github.com/zkherd/zkherd/loadrun"
)

// distOptions are zkherd load's flags for runs spread over processes and
// for sweeps.
type distOptions struct {
	processes   int
	runID       string
	join        string
	joinTimeout time.Duration
	sweep       string

	joinSet, processesSet, sweepSet bool
}

func (d *distOptions) register(f *pflag.FlagSet) {
	f.IntVar(&d.processes, "processes", 0, "spread the run over this many zkherd processes, this one included: the others join with --join (needs servers they all reach)")
	f.StringVar(&d.runID, "run-id", "", "id of the run (default: a new one), for the others to --join")
	f.StringVar(&d.join, "join", "", "join the distributed run with this id, started elsewhere with --processes; needs --server")
	f.DurationVar(&d.joinTimeout, "join-timeout", distrib.DefaultJoinTimeout, "how long the processes of a distributed run wait for each other")
	f.StringVar(&d.sweep, "sweep", "", "run the scenario at each of these client counts (such as 100,500,1000,2000) and fit a scale model")
}

// changed notes which of the flags were given.
func (d *distOptions) changed(f *pflag.FlagSet) {
	d.joinSet, d.processesSet, d.sweepSet = f.Changed("join"), f.Changed("processes"), f.Changed("sweep")
}

// active reports whether the command is a distributed run or a sweep.
func (d *distOptions) active() bool { return d.joinSet || d.processesSet || d.sweepSet }

// runDistributed runs zkherd load with --join, --processes or --sweep.
func runDistributed(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	d := &o.dist
	switch {
	case d.sweepSet && (d.joinSet || d.processesSet):
		return usageErr("--sweep runs in one process; it cannot be combined with --join or --processes")
	case d.sweepSet:
		return runSweep(ctx, g, o, stdout, stderr)
	case d.joinSet && d.processesSet:
		return usageErr("--join and --processes: a process either starts a distributed run (--processes) or joins one (--join)")
	case d.joinTimeout <= 0:
		return usageErr("--join-timeout %v: must be above 0", d.joinTimeout)
	case d.joinSet:
		return joinRun(ctx, g, o, stdout, stderr)
	case d.processes < 1 || d.processes > 64:
		return usageErr("--processes %d: choose 1 to 64", d.processes)
	}
	o.noTUI = true
	plan, r, err := o.plan(g, stdout, stderr)
	if err != nil {
		return err
	}
	return r.Start(ctx, plan, loadrun.Distributed{Processes: d.processes, RunID: d.runID, JoinTimeout: d.joinTimeout})
}

// joinRun joins a distributed run: the plan comes from the run, so
// scenario flags are refused.
func joinRun(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	d := &o.dist
	switch {
	case d.join == "":
		return usageErr("--join needs the id of a run, as printed by the process that started it with --processes")
	case o.scenario != "" || o.clientsSet || o.durationSet || o.opsSet:
		return usageErr("--join takes the scenario, clients and duration from the run it joins; drop --scenario, --clients, --duration and --ops")
	case d.runID != "":
		return usageErr("--join names the run; drop --run-id")
	case o.out != "":
		return usageErr("--join: the merged report is written by the process that started the run; drop --out")
	case g.server == "":
		return usageErr("--join needs --server: the servers of the run to join")
	}
	if err := g.checkAuth(); err != nil {
		return err
	}
	o.noTUI = true
	r, err := o.runner(g, stdout, stderr)
	if err != nil {
		return err
	}
	return r.Join(ctx, d.join, loadrun.Distributed{JoinTimeout: d.joinTimeout})
}

// runSweep runs the scenario at each client count of --sweep and fits a
// scale model.
func runSweep(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	counts, err := loadrun.ParseSweep(o.dist.sweep)
	if err != nil {
		return err
	}
	if o.clientsSet {
		return usageErr("--sweep sets the clients of each run; drop --clients")
	}
	ov, err := o.overrides(g)
	if err != nil {
		return err
	}
	sw, err := loadrun.NewSweep(o.scenario, counts, ov, o.out)
	if err != nil {
		return err
	}
	o.noTUI = true
	r, err := o.runner(g, stdout, stderr)
	if err != nil {
		return err
	}
	return r.Sweep(ctx, sw)
}
