package loadrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/distrib"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/launch"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// Distributed is a run spread over processes that coordinate through
// ZooKeeper: one starts it (Processes), the others join it (JoinID).
type Distributed struct {
	// Processes is how many processes take part, this one included (the
	// starter's).
	Processes int
	// RunID names the run; the starter makes one up when empty.
	RunID string
	// JoinTimeout bounds the wait for every process at each step.
	JoinTimeout time.Duration
	// WaitForRun makes a joining process wait up to JoinTimeout for the
	// run to be started rather than refuse it (--index: the processes of
	// a Kubernetes Job start in any order).
	WaitForRun bool
	// Launcher, when set, starts the other processes once the run exists
	// (--spawn, --hosts); nil leaves them to be started by hand.
	Launcher launch.Launcher
	// Coord, when it names servers, carries the run's coordination (plan,
	// barriers, parts) instead of the servers under test.
	Coord connstr.ConnectString
}

// coordination is where a distributed run's coordination goes: a
// session, its chroot, a line naming it, and the count of its requests
// (nil over TLS, whose stream cannot be read).
type coordination struct {
	s      *recipes.Session
	chroot string
	where  string
	count  *distrib.RequestCounter
	// reopen opens another session like s, for a member whose session
	// expired (distrib.Member.ReopenWith).
	reopen distrib.Reopen
	// launched is the processes this one started for the run, if any.
	launched *launch.Group
}

// coordinate opens the session of a distributed run's coordination: to
// d.Coord when it names servers, else to the servers under test.
func (r *Runner) coordinate(ctx context.Context, env *Env, d Distributed) (coordination, error) {
	c := coordination{chroot: env.Server.Chroot, where: "the servers under test (" + env.Server.String() + ")"}
	servers := env.Server.Servers
	if len(d.Coord.Servers) > 0 {
		servers, c.chroot = d.Coord.Servers, d.Coord.Chroot
		c.where = d.Coord.String() + exit.Advice(r.Target.Name, " ({coord-server}; no coordination request reaches the servers under test)")
	}
	// The session that settles a queue lists every item left in it.
	opts := append(slices.Clone(env.t.SessionOptions), recipes.WithBufferSizes(recipes.DefaultBufferSize, loadgen.CheckerRecvBuffer))
	if env.t.TLS == nil {
		c.count = &distrib.RequestCounter{}
		opts = append(opts, recipes.WithDialer(c.count.Dialer()))
	}
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	s, err := recipes.NewSession(sctx, servers, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		cause := errors.Unwrap(err) // recipes names the servers and the cause after its own name
		if cause == nil {
			cause = err
		}
		if len(d.Coord.Servers) > 0 {
			return c, exit.Inputf("{coord-server} %s: cannot connect (%v); start the coordinating ensemble, or drop {coord-server} to coordinate through the servers under test", d.Coord.String(), reason(cause))
		}
		return c, exit.Usagef("connect %s: %w", env.Server.String(), cause)
	}
	c.s = s
	c.reopen = func(ctx context.Context) (*recipes.Session, error) { return recipes.NewSession(ctx, servers, opts...) }
	return c, nil
}

// sessions opens the session on the servers under test and the
// coordination's (the same one without --coord-server); the servers
// under test first, so that a mistake there is named before one about
// the coordinator.
func (r *Runner) sessions(ctx context.Context, env *Env, d Distributed) (*recipes.Session, coordination, error) {
	if len(d.Coord.Servers) == 0 {
		c, err := r.coordinate(ctx, env, d)
		return c.s, c, err
	}
	// The work session settles a queue: it lists every item left in it.
	work, err := env.session(ctx, recipes.WithBufferSizes(recipes.DefaultBufferSize, loadgen.CheckerRecvBuffer))
	if err != nil {
		return nil, coordination{}, err
	}
	c, err := r.coordinate(ctx, env, d)
	if err != nil {
		work.Close()
		return nil, c, err
	}
	return work, c, nil
}

// options are the distrib options of a step with this coordination.
func (c coordination) options(d Distributed, load loadgen.Options) distrib.Options {
	o := distrib.Options{Load: load, JoinTimeout: d.JoinTimeout, CoordWhere: c.where}
	if c.launched != nil {
		o.Departed, o.Departure = c.launched.OneExited(), c.launched.FirstExit
	}
	if c.count != nil {
		o.CoordRequests = c.count.Requests
	}
	return o
}

// Start starts a distributed run of plan for d.Processes processes, runs
// this process's share and writes the merged report.
func (r *Runner) Start(ctx context.Context, plan *Plan, d Distributed) (err error) {
	defer r.closeEvents()
	if d.Launcher != nil {
		if err := d.Launcher.Check(ctx); err != nil {
			return launchError(err)
		}
	}
	id := d.RunID
	if id == "" {
		id = plan.RunID // the default report directory is named after it
	}
	env, err := r.Target.Open(ctx, plan, plan.clients()*d.Processes)
	if err != nil {
		return err
	}
	defer env.Close()
	work, c, err := r.sessions(ctx, env, d)
	if err != nil {
		return err
	}
	defer work.Close()
	defer c.s.Close()
	server := env.Server.String()
	m, err := distrib.Start(ctx, c.s, c.chroot, distrib.Plan{RunID: id, Processes: d.Processes, Title: plan.Title, Runs: plan.Runs})
	if err != nil {
		return distribError(err, server)
	}
	m.ReopenWith(c.reopen)
	if work != c.s {
		m.UseWork(work, env.Server.Chroot)
	}
	defer m.Finish(context.WithoutCancel(ctx))
	if d.Launcher == nil {
		fmt.Fprintf(r.Stderr, "distributed run %s: %s, %d clients in each of %d processes; start the others with\n  zkherd %s\n",
			id, plan.Title, plan.clients(), d.Processes, joinCommand(r.joinArgs(d.join(id, server, false))))
	} else {
		fmt.Fprintf(r.Stderr, "distributed run %s: %s, %d clients in each of %d processes\n", id, plan.Title, plan.clients(), d.Processes)
		g, closeJoiners, lerr := r.launched(ctx, d.Launcher, id, server, d)
		if lerr != nil {
			return lerr
		}
		c.launched = g
		// The launched processes get time to finish only when the run
		// completed (err is Start's result): after a failure, such as a
		// process that ended before every one arrived, the others are
		// stopped at once.
		completed := false
		defer func() { closeJoiners(completed) }() // before Finish removes the run
		defer func() { completed = ctx.Err() == nil && exit.Code(err, false) <= exit.CheckFailed }()
	}
	out := r.executeDistributed(ctx, env, m, plan, d, c, func(o distrib.Outcome) *loadgen.Result { return o.Merged })
	r.endEvents()
	if out.Err != nil && len(out.Results) == 0 {
		return distribError(out.Err, server)
	}
	if len(out.Results) == 0 {
		return ctx.Err()
	}
	rep := r.report(fmt.Sprintf("%s, %d processes", plan.Title, d.Processes), env, plan.Out)
	var runErr error
	if out.Err != nil {
		runErr = distribError(out.Err, server)
	}
	return rep.Finish(r.Stdout, rep.Build(out.Results, out.Partial || out.Err != nil), runErr)
}

// Join joins the distributed run id, started elsewhere, runs this
// process's share and prints its own summary; the starter writes the
// merged report. The target must name servers.
func (r *Runner) Join(ctx context.Context, id string, d Distributed) error {
	defer r.closeEvents()
	env := &Env{Server: r.Target.Server, t: r.Target}
	server := env.Server.String()
	work, c, err := r.sessions(ctx, env, d)
	if err != nil {
		return err
	}
	defer work.Close()
	defer c.s.Close()
	m, err := r.join(ctx, c.s, c.chroot, id, d)
	if err != nil {
		return distribError(err, server)
	}
	m.ReopenWith(c.reopen)
	if work != c.s {
		m.UseWork(work, env.Server.Chroot)
	}
	defer m.Leave()
	dp := m.Plan()
	fmt.Fprintf(r.Stderr, "joined run %s (%s) as process %d of %d; waiting for the others...\n", dp.RunID, dp.Title, m.Index()+1, dp.Processes)
	plan := &Plan{Runs: dp.Runs, Title: dp.Title}
	out := r.executeDistributed(ctx, env, m, plan, d, c, func(o distrib.Outcome) *loadgen.Result { return o.Local })
	r.endEvents()
	if out.Err != nil {
		return distribError(out.Err, server)
	}
	fmt.Fprintf(r.Stdout, "process %d of %d of run %s: results published; the merged report is written by the process that started the run\n",
		m.Index()+1, dp.Processes, dp.RunID)
	rep := r.report(dp.Title+" (this process)", env, "")
	return rep.Finish(r.Stdout, rep.Build(out.Results, out.Partial), nil)
}

// executeDistributed runs the plan's steps through Execute, each step
// being a distrib step; pick says which of its results the plan keeps.
func (r *Runner) executeDistributed(ctx context.Context, env *Env, m *distrib.Member, plan *Plan, d Distributed, c coordination, pick func(distrib.Outcome) *loadgen.Result) Outcome {
	var events *hub // the hub of the events, for the other processes' intervals
	x := execution{
		step: func(ctx context.Context, i int, run scenarios.Run, opts loadgen.Options) (*loadgen.Result, bool, error) {
			o := c.options(d, opts)
			if events != nil {
				o.OnProcessInterval = events.processIntervalHook(run.Name)
			}
			out, err := m.Step(ctx, i, o)
			if err != nil {
				return nil, false, err
			}
			return pick(out), out.Local.Partial, nil
		},
		announce: func(i int, run scenarios.Run) string {
			if len(plan.Runs) < 2 {
				return ""
			}
			return fmt.Sprintf("run %d of %d: %s; waiting for every process", i+1, len(plan.Runs), run.Name)
		},
	}
	return r.show(ctx, plan, env.Where(), func(ctx context.Context, s sink) Outcome {
		events, _ = s.(*hub)
		return x.run(ctx, env.LoadOptions(), plan, s)
	})
}

// distribError turns a distributed run's failure into the user's message.
func distribError(err error, server string) error {
	switch {
	case errors.Is(err, distrib.ErrNoRun):
		return exit.Inputf("%w on %s; check the id printed by the process that started the run, and {server}", reason(err), server)
	case errors.Is(err, context.Canceled):
		return err
	}
	return exit.AsUsage(reason(err))
}
