package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/zkherd/zkherd/distrib"
	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scenarios"
)

// distOptions are zkherd load's flags for runs spread over processes and
// for sweeps (sweep_cmd.go).
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
	}
	return startDistributed(ctx, g, o, stdout, stderr)
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
	}
	cs, ok, err := g.connectString()
	if err != nil {
		return err
	}
	if !ok {
		return usageErr("--join needs --server: the servers of the run to join")
	}
	if err := g.checkAuth(); err != nil {
		return err
	}
	s, err := coordSession(ctx, g, cs.Servers)
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := distrib.Join(ctx, s, cs.Chroot, d.join)
	if err != nil {
		return joinErr(err, cs.String())
	}
	defer m.Leave()
	plan := m.Plan()
	fmt.Fprintf(stderr, "joined run %s (%s) as process %d of %d; waiting for the others...\n", plan.RunID, plan.Title, m.Index()+1, plan.Processes)
	outcomes, err := executeDistributed(ctx, g, o, m, cs.Servers, cs.Chroot, stderr)
	if err != nil {
		return joinErr(err, cs.String())
	}
	fmt.Fprintf(stdout, "process %d of %d of run %s: results published; the merged report is written by the process that started the run\n",
		m.Index()+1, plan.Processes, plan.RunID)
	var local []*loadgen.Result
	for _, oc := range outcomes {
		local = append(local, oc.Local)
	}
	rep := buildReport(&loadPlan{title: plan.Title + " (this process)"}, cs.String(), false, local, partialOf(local))
	if err := report.WriteSummary(stdout, rep); err != nil {
		return err
	}
	return exitFor(rep)
}

// startDistributed starts a distributed run for --processes processes and
// writes the merged report.
func startDistributed(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	d := &o.dist
	if d.processes < 1 || d.processes > 64 {
		return usageErr("--processes %d: choose 1 to 64", d.processes)
	}
	plan, err := planLoad(g, o)
	if err != nil {
		return err
	}
	if len(plan.spec.Faults) > 0 {
		return usageErr("%s injects faults, which a run spread over processes cannot do yet; run it without --processes", plan.title)
	}
	for _, r := range plan.runs {
		if r.Recipe == scenarios.Queue || r.Recipe == scenarios.Barrier {
			return usageErr("%s is a %s scenario, which cannot be spread over processes yet (item accounting and barrier groups are per process); use a lock, semaphore, rwlock or election scenario", plan.title, r.Recipe)
		}
	}
	id := d.runID
	if id == "" {
		id = loadgen.NewRunID()
	}
	cs, haveServer, err := g.connectString()
	if err != nil {
		return err
	}
	local := !haveServer
	if local {
		ens, err := startLocalEnsemble(ctx, ensemble.Options{Nodes: plan.spec.Effective().Ensemble, NoFsync: true,
			HeapMB: heapFor(plan.spec.Effective().Clients * d.processes)}, stderr)
		if err != nil {
			return err
		}
		defer ens.Stop()
		cs.Servers = ens.Servers()
	}
	s, err := coordSession(ctx, g, cs.Servers)
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := distrib.Start(ctx, s, cs.Chroot, distrib.Plan{RunID: id, Processes: d.processes, Title: plan.title, Runs: plan.runs})
	if err != nil {
		return usageErr("%s", strings.TrimPrefix(err.Error(), "distrib: "))
	}
	defer m.Finish(context.WithoutCancel(ctx))
	fmt.Fprintf(stderr, "distributed run %s: %s, %d clients in each of %d processes; start the others with\n  zkherd load --join %s --server %s\n",
		id, plan.title, plan.spec.Effective().Clients, d.processes, id, cs.String())
	outcomes, err := executeDistributed(ctx, g, o, m, cs.Servers, cs.Chroot, stderr)
	var merged []*loadgen.Result
	for _, oc := range outcomes {
		merged = append(merged, oc.Merged)
	}
	if err != nil && len(merged) == 0 {
		return joinErr(err, cs.String())
	}
	if len(merged) == 0 {
		return ctx.Err()
	}
	plan.title = fmt.Sprintf("%s, %d processes", plan.title, d.processes)
	rep := buildReport(plan, cs.String(), local, merged, partialOf(merged) || err != nil)
	if werr := report.WriteSummary(stdout, rep); werr != nil {
		return werr
	}
	if plan.out != "" {
		if werr := report.WriteDir(plan.out, rep); werr != nil {
			return usageErr("%v", werr)
		}
		fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(plan.out, "report.html"))
	}
	if err != nil {
		return joinErr(err, cs.String())
	}
	return exitFor(rep)
}

// executeDistributed runs the plan's steps with a progress line.
func executeDistributed(ctx context.Context, g *globalOptions, o *loadOptions, m *distrib.Member, servers []string, chroot string, stderr io.Writer) ([]distrib.Outcome, error) {
	prog := newProgressLine(stderr)
	defer prog.finish()
	runs := m.Plan().Runs
	return distrib.Execute(ctx, m, distrib.Options{
		Load: loadgen.Options{
			Servers: servers, Chroot: chroot, SessionOptions: g.sessionOptions(), TLS: g.tlsCfg, SourceAddrs: o.sourceAddrs,
			Progress: prog.update,
			Logf: func(format string, args ...any) {
				prog.finish()
				fmt.Fprintf(stderr, format+"\n", args...)
			},
		},
		JoinTimeout: o.dist.joinTimeout,
		Starting: func(step int, run scenarios.Run) {
			prog.finish()
			if len(runs) > 1 {
				fmt.Fprintf(stderr, "run %d of %d: %s; waiting for every process\n", step+1, len(runs), run.Name)
			}
		},
	})
}

// coordSession opens the session a process coordinates through.
func coordSession(ctx context.Context, g *globalOptions, servers []string) (*recipes.Session, error) {
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	s, err := recipes.NewSession(sctx, servers, g.sessionOptions()...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, usageErr("%s", strings.TrimPrefix(err.Error(), "recipes: "))
	}
	return s, nil
}

// joinErr turns a distributed run's failure into the user's message.
func joinErr(err error, server string) error {
	msg := strings.TrimPrefix(err.Error(), "distrib: ")
	switch {
	case errors.Is(err, distrib.ErrNoRun):
		return usageErr("%s on %s; check the id printed by the process that started the run, and --server", msg, server)
	case errors.Is(err, distrib.ErrStarted), errors.Is(err, distrib.ErrFinished), errors.Is(err, distrib.ErrFull),
		errors.Is(err, distrib.ErrCancelled), errors.Is(err, distrib.ErrBadPlan):
		return usageErr("%s", msg)
	case errors.Is(err, context.Canceled):
		return err
	}
	return usageErr("%s", strings.TrimPrefix(msg, "loadgen: "))
}

func partialOf(rs []*loadgen.Result) bool {
	for _, r := range rs {
		if r.Partial {
			return true
		}
	}
	return false
}

// exitFor is the exit status of a report: checks failed, partial, or fine.
func exitFor(rep *report.Run) error {
	if failed := failedChecks(rep); len(failed) > 0 {
		return &exitError{code: exitCheckFailed, err: fmt.Errorf("correctness checks failed: %s", strings.Join(failed, "; "))}
	}
	if rep.Partial {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted: the run was stopped early and its report is marked partial")}
	}
	return nil
}
