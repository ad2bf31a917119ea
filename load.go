package main

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/scenarios"
)

// loadOptions are zkherd load's flags.
type loadOptions struct {
	scenario    string
	clients     int
	duration    time.Duration
	ops         uint64
	out         string
	noTUI       bool
	sourceAddrs int
	rate        float64
	arrival     string
	thresholds  []string
	// serverConfig is --server-config (servercfg_cmd.go).
	serverConfig string

	// Set from which flags were given.
	clientsSet, durationSet, opsSet, timeoutSet, rateSet bool

	// dist: --processes, --join, --sweep (distrib_cmd.go).
	dist distOptions
}

func newLoadCmd(g *globalOptions) *cobra.Command {
	o := &loadOptions{}
	cmd := &cobra.Command{
		Use:   "load --scenario NAME|FILE",
		Short: "Run a load scenario with many contending ZooKeeper sessions",
		Long: `Run a load scenario: many clients, each with its own ZooKeeper session, drive a
recipe (fair lock, herd locks, read/write lock, semaphore, queue, election,
barrier) while zkherd records latencies per phase, measures the herd effect
and checks correctness (mutual exclusion, FIFO order, semaphore limit, single
leader, queue items exactly once, no znode left behind).

Without --server, a local ZooKeeper ensemble is started for the run and removed
afterwards. The run works under /zkherd/runs/<id> and removes it at the end.
The first Ctrl-C stops the run gracefully and writes a partial report; a
second one exits at once.

Every run writes its report directory (report.json, report.html, .hgrm and
.hlog files) to --out, by default ./zkherd-load-<run id>/, and prints its path.

--rate R runs an open model: R operations per second whatever the server's
pace, latency measured from each operation's intended start; the report gives
the target rate next to the achieved one and says who could not keep up.
--threshold EXPR adds a pass/fail criterion on a figure, as k6 has them; a
crossed threshold fails the run. Scenario files: docs/SCENARIOS.md.

Exit status: 0 all checks passed and thresholds held, 1 a check failed or a
threshold was crossed, 2 bad input or an unreachable server, 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP: the run stops and writes a partial report).`,
		Example: `  zkherd load --scenario herd-vs-fair
  zkherd load --scenario fair-lock --clients 200 --duration 30s --out ./run1
  zkherd load --scenario semaphore --rate 300 --threshold 'acquire.p99<500ms' --threshold 'throughput>280' 
  zkherd load --scenario my-scenario.yaml --server 10.0.0.5:2181
  zkherd load --scenario fair-lock-chaos --out ./chaos          # faults: expiries, kills, cuts
  zkherd load --scenario fair-lock-adversary --server-config skip-acl  # lagging member, foreign deletes
  zkherd load --scenario fair-lock --processes 3 --run-id r1 --server 10.0.0.5:2181
  zkherd load --join r1 --server 10.0.0.5:2181                   # on each other host
  zkherd load --scenario herd-vs-fair --sweep 100,500,1000,2000  # scale model
  zkherd scenarios list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			o.clientsSet, o.durationSet, o.opsSet = f.Changed("clients"), f.Changed("duration"), f.Changed("ops")
			o.rateSet = f.Changed("rate")
			o.timeoutSet = cmd.Flags().Changed("session-timeout")
			o.dist.changed(f)
			return runLoad(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "built-in scenario name or YAML file (see zkherd scenarios list)")
	f.IntVar(&o.clients, "clients", 0, "number of clients, each its own ZooKeeper session (default: the scenario's)")
	f.DurationVar(&o.duration, "duration", 0, "how long operations run (default: the scenario's)")
	f.Uint64Var(&o.ops, "ops", 0, "stop after this many operations instead of after a duration")
	f.StringVar(&o.out, "out", "", "directory for report.json, report.html and the .hgrm/.hlog files of every phase (default ./zkherd-load-<run id>)")
	f.Float64Var(&o.rate, "rate", 0, "open model: start this many operations per second over all clients, whether or not earlier ones finished")
	f.StringVar(&o.arrival, "arrival", "", "arrival model: closed, stampede, constant or poisson (default: the scenario's; constant with --rate)")
	f.StringArrayVar(&o.thresholds, "threshold", nil, "fail the run (exit 1) unless a figure meets this, k6 style: 'acquire.p99<500ms', 'throughput>300', 'fair:errors<=0' (repeatable)")
	f.BoolVar(&o.noTUI, "no-tui", false, "print a progress line instead of the live dashboard")
	f.StringVar(&o.serverConfig, "server-config", "", serverConfigHelp)
	f.IntVar(&o.sourceAddrs, "source-addrs", 0, "loopback source addresses to spread connections over (default: one per 50 clients, loopback servers only)")
	o.dist.register(f)
	return cmd
}

// overrides checks the scenario flags and turns them into overrides.
func (o *loadOptions) overrides(g *globalOptions) (scenarios.Overrides, error) {
	var ov scenarios.Overrides
	if o.scenario == "" {
		return ov, usageErr("--scenario is required: a built-in name (%s) or a YAML file", strings.Join(scenarios.Names(), ", "))
	}
	switch {
	case o.clientsSet && o.clients <= 0:
		return ov, usageErr("--clients %d: must be at least 1", o.clients)
	case o.durationSet && o.duration <= 0:
		return ov, usageErr("--duration %v: must be above 0", o.duration)
	case o.opsSet && o.ops == 0:
		return ov, usageErr("--ops 0: must be at least 1")
	case o.durationSet && o.opsSet:
		return ov, usageErr("--duration and --ops: give one bound, not both")
	case o.sourceAddrs < 0 || o.sourceAddrs > 254:
		return ov, usageErr("--source-addrs %d: choose 1 to 254 (0 for automatic)", o.sourceAddrs)
	case o.rateSet && o.rate <= 0:
		return ov, usageErr("--rate %v: must be above 0 operations per second", o.rate)
	case o.arrival != "" && !slices.Contains(scenarios.ArrivalKinds(), scenarios.ArrivalKind(o.arrival)):
		return ov, usageErr("--arrival %s: choose closed, stampede, constant or poisson", o.arrival)
	case o.rateSet && o.arrival != "" && !scenarios.ArrivalKind(o.arrival).Open():
		return ov, usageErr("--rate with --arrival %s: a rate needs an open model (constant or poisson)", o.arrival)
	}
	for _, expr := range o.thresholds {
		t, err := scenarios.ParseThreshold(expr)
		if err != nil {
			var te *scenarios.ThresholdError
			if errors.As(err, &te) {
				return ov, usageErr("--threshold %s", te.Detail())
			}
			return ov, usageErr("--threshold %v", err)
		}
		ov.Thresholds = append(ov.Thresholds, t)
	}
	ov.Arrival, ov.Rate = scenarios.ArrivalKind(o.arrival), o.rate
	if err := g.checkAuth(); err != nil {
		return ov, err
	}
	if o.timeoutSet {
		if err := validateSessionTimeout(g.sessionTimeout); err != nil {
			return ov, err
		}
		ov.SessionTimeout = g.sessionTimeout
	}
	if o.clientsSet {
		ov.Clients = o.clients
	}
	if o.durationSet {
		ov.Duration = o.duration
	}
	if o.opsSet {
		ov.Ops = o.ops
	}
	return ov, nil
}

// runner is the load application layer for this command's flags.
func (o *loadOptions) runner(g *globalOptions, stdout, stderr io.Writer) (*loadrun.Runner, error) {
	cs, _, err := g.connectString()
	if err != nil {
		return nil, err
	}
	scfg, err := parseServerConfig(o.serverConfig)
	if err != nil {
		return nil, err
	}
	r := &loadrun.Runner{
		Target:  loadrun.Target{Server: cs, SessionOptions: g.sessionOptions(), TLS: g.tlsCfg, SourceAddrs: o.sourceAddrs, ServerConfig: scfg, Log: stderr},
		Stdout:  stdout,
		Stderr:  stderr,
		Version: Version(),
	}
	if !o.noTUI && loadrun.IsTerminal(stdout) && loadrun.IsTerminal(os.Stdin) {
		r.Display = dashboardFor(g)
	}
	return r, nil
}

// runLoad runs zkherd load; see its --help.
func runLoad(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	if o.dist.active() {
		return runDistributed(ctx, g, o, stdout, stderr)
	}
	plan, r, err := o.plan(g, stdout, stderr)
	if err != nil {
		return err
	}
	return r.Run(ctx, plan)
}

// plan checks the flags and returns the plan they ask for and the runner
// that runs it.
func (o *loadOptions) plan(g *globalOptions, stdout, stderr io.Writer) (*loadrun.Plan, *loadrun.Runner, error) {
	ov, err := o.overrides(g)
	if err != nil {
		return nil, nil, err
	}
	plan, err := loadrun.NewPlan(o.scenario, ov, o.out)
	if err != nil {
		return nil, nil, err
	}
	r, err := o.runner(g, stdout, stderr)
	return plan, r, err
}
