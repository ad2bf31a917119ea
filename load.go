package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zkherd/zkherd/distrib"
	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/exporter"
	"github.com/zkherd/zkherd/internal/buildinfo"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/pkgerr"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/tui"
)

// loadOptions are zkherd load's flags: the run as loadrun.Request, and
// how it is shown and where.
type loadOptions struct {
	req          loadrun.Request
	noTUI        bool
	serverConfig string // --server-config (ensemble.ParseServerConfig)

	metricsAddr   string        // --metrics-addr: serve Prometheus metrics there
	metricsLinger time.Duration // how long the endpoint outlives the run
	stream        string        // --stream FILE or -: JSON lines while the run goes
	cleanup       bool          // --cleanup: remove dead runs' namespaces, run nothing
	rate          string        // --rate: a rate or a schedule (loadrun.ParseRate)
}

func newLoadCmd(g *globalOptions) *cobra.Command {
	o := &loadOptions{}
	cmd := newCommand("load --scenario NAME|FILE", "Run a load scenario with many contending ZooKeeper sessions", "load", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		f, q := cmd.Flags(), &o.req
		q.ClientsGiven, q.DurationGiven, q.OpsGiven, q.RateGiven = f.Changed("clients"), f.Changed("duration"), f.Changed("ops"), f.Changed("rate")
		q.JoinGiven, q.ProcessesGiven, q.SweepGiven = f.Changed("join"), f.Changed("processes"), f.Changed("sweep")
		launchGiven(f, q)
		q.SessionTimeout, q.SessionTimeoutGiven = g.sessionTimeout, f.Changed("session-timeout")
		if q.RateGiven {
			var err error
			if q.Rate, q.Stages, err = loadrun.ParseRate(o.rate); err != nil {
				return err
			}
		}
		if o.cleanup {
			return runCleanup(cmd.Context(), g, cmd, cmd.OutOrStdout())
		}
		return runLoad(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
	})
	f, q := cmd.Flags(), &o.req
	f.StringVar(&q.Scenario, "scenario", "", "built-in scenario name or YAML file (see zkherd scenarios list)")
	f.IntVar(&q.Clients, "clients", 0, "number of clients, each its own ZooKeeper session (default: the scenario's)")
	f.DurationVar(&q.Duration, "duration", 0, "how long operations run (default: the scenario's)")
	f.Uint64Var(&q.Ops, "ops", 0, "stop after this many operations instead of after a duration")
	f.StringVar(&q.Out, "out", "", "directory for report.json, report.html and the .hgrm/.hlog files of every phase (default ./zkherd-load-<run id>)")
	f.StringVar(&o.rate, "rate", "", "open model: start this many operations per second over all clients, whether or not earlier ones finished; or a schedule RATE:DURATION,... such as 100:30s,500:30s,1000:60s")
	f.Float64Var(&q.RampUp, "ramp-up", 0, "sessions opened per second before the window opens (default: the scenario's, or enough to open them in 10 s, at most 2,000/s)")
	f.StringVar(&q.Arrival, "arrival", "", "arrival model: closed, stampede, constant or poisson (default: the scenario's; constant with --rate)")
	f.StringArrayVar(&q.Thresholds, "threshold", nil, "fail the run (exit 1) unless a figure meets this, k6 style: 'acquire.p99<500ms', 'throughput>300', 'fair:errors<=0' (repeatable)")
	f.StringVar(&q.FindMax, "find-max", "", "search for the highest constant rate served within a threshold, such as 'acquire.p99<50ms': runs of --duration each, doubling from 50/s, then bisecting; prints the curve")
	f.BoolVar(&q.AbortOnFail, "abort-on-fail", false, "stop the run as soon as a threshold is crossed for good (k6's abortOnFail): errors and PHASE.max under an upper bound; other thresholds are judged at the end")
	f.BoolVar(&o.noTUI, "no-tui", false, "print a progress line instead of the live dashboard")
	f.StringVar(&o.serverConfig, "server-config", "", ensemble.ServerConfigHelp)
	f.IntVar(&q.SourceAddrs, "source-addrs", 0, "loopback source addresses to spread connections over (default: one per 50 clients, loopback servers only)")
	f.IntVar(&q.Processes, "processes", 0, "spread the run over this many zkherd processes, this one included: the others join with --join (needs servers they all reach)")
	f.StringVar(&q.RunID, "run-id", "", "id of the run (default: a new one), for the others to --join")
	f.StringVar(&q.CoordServer, "coord-server", "", "with --processes, --spawn, --hosts or --join: coordinate the processes (plan, barriers, results) through these servers, host:port[,...][/chroot], not through the servers under test")
	f.StringVar(&q.Join, "join", "", "join the distributed run with this id, started elsewhere with --processes; needs --server")
	f.DurationVar(&q.JoinTimeout, "join-timeout", distrib.DefaultJoinTimeout, "how long the processes of a distributed run wait for each other")
	registerLaunchFlags(f, q)
	f.StringVar(&q.Sweep, "sweep", "", "run the scenario at each of these client counts (such as 100,500,1000,2000) and fit a scale model")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics of the run (ramp-up, window, drain) on HOST:PORT/metrics")
	f.DurationVar(&o.metricsLinger, "metrics-linger", defaultMetricsLinger, "with --metrics-addr: keep serving this long after the run, so the last scrape sees the final counts")
	f.StringVar(&o.stream, "stream", "", "write the run's figures as one JSON object per second to FILE (- for stdout; the summary then goes to stderr)")
	f.BoolVar(&o.cleanup, "cleanup", false, "run nothing: remove the namespaces (/zkherd/runs/<id>) that runs whose process is gone left on --server, and say which")
	return cmd
}

// runCleanup is zkherd load --cleanup, which takes only the flags that
// reach the servers.
func runCleanup(ctx context.Context, g *globalOptions, cmd *cobra.Command, stdout io.Writer) error {
	var other []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "cleanup" && cmd.LocalFlags().Lookup(f.Name) != nil {
			other = append(other, "--"+f.Name)
		}
	})
	if len(other) > 0 {
		return usageErr("--cleanup runs alone: drop %s", strings.Join(other, ", "))
	}
	if err := g.checkAuth(); err != nil {
		return err
	}
	cs, _, err := g.connectString()
	if err != nil {
		return err
	}
	return loadrun.Cleanup(ctx, loadrun.Target{Server: cs, SessionOptions: g.sessionOptions(), TLS: g.tlsCfg}, stdout)
}

// runner is the load application layer for this command's flags.
func (o *loadOptions) runner(g *globalOptions, stdout, stderr io.Writer) (*loadrun.Runner, error) {
	if err := g.checkAuth(); err != nil {
		return nil, err
	}
	cs, _, err := g.connectString()
	if err != nil {
		return nil, err
	}
	scfg, err := ensemble.ParseServerConfig(o.serverConfig)
	if err != nil {
		return nil, usageErr("--server-config %v", pkgerr.Reason(err))
	}
	return &loadrun.Runner{
		Target:  loadrun.Target{Server: cs, SessionOptions: g.sessionOptions(), TLS: g.tlsCfg, SourceAddrs: o.req.SourceAddrs, ServerConfig: scfg, Log: stderr, Name: flagName},
		Stdout:  stdout,
		Stderr:  stderr,
		Version: buildinfo.Version(),
		Joiners: o.joiners(g),
	}, nil
}

// show starts the reader of r's events that draws on the terminal: the
// dashboard when asked for and on a terminal (quitting it calls stop),
// else the progress line on stderr. The summary waits for it
// (TerminalFree); wait returns once it is done, with the dashboard's
// failure as the user reads it.
func (o *loadOptions) show(ctx context.Context, g *globalOptions, r *loadrun.Runner, stop func(), dashboard bool, stdout, stderr io.Writer) (wait func() error) {
	// Events are read to their end, even after Ctrl-C (the run stops
	// gracefully and says so); the dashboard ends with ctx (a hang-up).
	all := context.WithoutCancel(ctx)
	free := make(chan struct{})
	r.TerminalFree = free
	var derr error
	if dashboard && !o.noTUI && loadrun.IsTerminal(stdout) && loadrun.IsTerminal(os.Stdin) {
		events := r.Subscribe(all, loadrun.WantDetail)
		go func() {
			defer close(free)
			derr = tui.LoadDashboard(ctx, events, stop, tui.InspectOptions{SessionTimeout: g.sessionTimeout, Auth: g.auth, Name: flagName})
		}()
	} else {
		events := r.Subscribe(all, 0)
		go func() {
			defer close(free)
			loadrun.PrintProgress(stderr, events)
		}()
	}
	return func() error {
		<-free
		if derr != nil {
			return usageErr("load dashboard: %v (use --no-tui)", pkgerr.Reason(derr))
		}
		return nil
	}
}

// do runs job on r with the terminal's reader of its events, and the
// other readers already subscribed; the dashboard's failure, or its quit
// before the run ended, is the exit.
func (o *loadOptions) do(ctx context.Context, g *globalOptions, r *loadrun.Runner, job *loadrun.Job, dashboard bool, stdout, stderr io.Writer) error {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	wait := o.show(ctx, g, r, stop, dashboard, stdout, stderr)
	err := r.Do(runCtx, job)
	derr := wait()
	quit := runCtx.Err() != nil && ctx.Err() == nil // the dashboard stopped the run
	switch {
	case derr != nil && (err == nil || quit):
		return derr
	case quit && errors.Is(err, context.Canceled):
		return &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted: the dashboard was quit before the run measured anything")}
	}
	return err
}

// defaultMetricsLinger outlives a scrape interval of 15 s, Prometheus's
// usual, by a few seconds.
const defaultMetricsLinger = 20 * time.Second

// runLoad runs zkherd load; see its --help.
func runLoad(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) (err error) {
	if o.metricsLinger < 0 {
		return usageErr("--metrics-linger %v: must be 0 or more", o.metricsLinger)
	}
	job, err := loadrun.Prepare(&o.req)
	if err != nil {
		return err
	}
	dashboard := job.Live() && o.stream != "-"
	var streamOut io.Writer
	if o.stream == "-" {
		streamOut, stdout = stdout, stderr // stdout is the stream's alone
	}
	r, err := o.runner(g, stdout, stderr)
	if err != nil {
		return err
	}
	// The readers of the run's events beside the terminal's, subscribed
	// once nothing can fail before the run: each reads its own
	// subscription to the end (even after Ctrl-C, the run says how it
	// stopped); read waits for them.
	type reader struct {
		want    loadrun.Want
		consume func(<-chan loadrun.Event)
	}
	var (
		readers []reader
		read    sync.WaitGroup
	)
	defer read.Wait()
	if o.stream != "" {
		if streamOut == nil {
			f, ferr := os.Create(o.stream)
			if ferr != nil {
				return usageErr("--stream %s: %v", o.stream, pkgerr.Reason(ferr))
			}
			streamOut = f
		}
		s := loadrun.NewStreamSink(streamOut)
		if f, ok := streamOut.(*os.File); ok && o.stream != "-" {
			defer func() {
				read.Wait() // the last line written
				if cerr := f.Close(); cerr != nil && err == nil {
					err = usageErr("--stream %s: %v", o.stream, cerr)
				}
				if err != nil && s.Lines() == 0 {
					os.Remove(o.stream) // nothing ran, nothing left behind
				}
			}()
		}
		defer func() {
			read.Wait()
			if serr := s.Err(); serr != nil {
				fmt.Fprintf(stderr, "zkherd: --stream: %s; the stream stopped there\n", usermsg.Clean(serr.Error()))
			}
		}()
		readers = append(readers, reader{0, s.Consume})
	}
	if o.metricsAddr != "" {
		var process string
		if m, merr := o.req.Mode(); merr == nil && (m == loadrun.ModeStart || m == loadrun.ModeJoin) {
			host, _ := os.Hostname()
			process = loadgen.ProcessLabel(host, os.Getpid())
		}
		ep, l, lerr := exporter.ServeLoad(o.metricsAddr, process)
		if lerr != nil {
			return lerr
		}
		fmt.Fprintf(stderr, "serving the run's metrics on http://%s/metrics\n", ep.Addr())
		defer func() {
			read.Wait() // the last figures kept
			linger := o.metricsLinger
			if !l.Started() {
				linger = 0 // nothing ran: nothing for a last scrape to see
			} else if linger > 0 {
				fmt.Fprintf(stderr, "metrics stay on http://%s/metrics for %v (--metrics-linger; Ctrl-C to stop now)\n", ep.Addr(), linger)
			}
			_ = ep.Close(ctx, linger)
		}()
		readers = append(readers, reader{loadrun.WantIntervals, l.Consume})
	}
	for _, rd := range readers {
		events := r.Subscribe(context.Background(), rd.want)
		read.Add(1)
		go func() {
			defer read.Done()
			rd.consume(events)
		}()
	}
	return o.do(ctx, g, r, job, dashboard, stdout, stderr)
}
