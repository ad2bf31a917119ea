package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/report"
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

	// Set from which flags were given.
	clientsSet, durationSet, opsSet, timeoutSet, rateSet bool

	// dist: --processes, --join, --sweep (distrib_cmd.go, sweep_cmd.go).
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
	f.IntVar(&o.sourceAddrs, "source-addrs", 0, "loopback source addresses to spread connections over (default: one per 50 clients, loopback servers only)")
	o.dist.register(f)
	return cmd
}

// loadPlan is a validated load command: what to run, where, and where to
// write the report.
type loadPlan struct {
	spec  scenarios.Spec
	runs  []scenarios.Run
	out   string // "" for none
	title string
	runID string // the first run's id ("" picks one per run)
}

// planLoad checks every input before anything starts.
func planLoad(g *globalOptions, o *loadOptions) (*loadPlan, error) {
	if o.scenario == "" {
		return nil, usageErr("--scenario is required: a built-in name (%s) or a YAML file", strings.Join(scenarios.Names(), ", "))
	}
	switch {
	case o.clientsSet && o.clients <= 0:
		return nil, usageErr("--clients %d: must be at least 1", o.clients)
	case o.durationSet && o.duration <= 0:
		return nil, usageErr("--duration %v: must be above 0", o.duration)
	case o.opsSet && o.ops == 0:
		return nil, usageErr("--ops 0: must be at least 1")
	case o.durationSet && o.opsSet:
		return nil, usageErr("--duration and --ops: give one bound, not both")
	case o.sourceAddrs < 0 || o.sourceAddrs > 254:
		return nil, usageErr("--source-addrs %d: choose 1 to 254 (0 for automatic)", o.sourceAddrs)
	case o.rateSet && o.rate <= 0:
		return nil, usageErr("--rate %v: must be above 0 operations per second", o.rate)
	case o.arrival != "" && !slices.Contains(scenarios.ArrivalKinds(), scenarios.ArrivalKind(o.arrival)):
		return nil, usageErr("--arrival %s: choose closed, stampede, constant or poisson", o.arrival)
	case o.rateSet && o.arrival != "" && !scenarios.ArrivalKind(o.arrival).Open():
		return nil, usageErr("--rate with --arrival %s: a rate needs an open model (constant or poisson)", o.arrival)
	}
	var thresholds []scenarios.Threshold
	for _, expr := range o.thresholds {
		t, err := scenarios.ParseThreshold(expr)
		if err != nil {
			return nil, usageErr("--threshold %s", strings.TrimPrefix(err.Error(), scenarios.ErrThreshold.Error()+" "))
		}
		thresholds = append(thresholds, t)
	}
	if err := g.checkAuth(); err != nil {
		return nil, err
	}
	if o.timeoutSet {
		if err := validateSessionTimeout(g.sessionTimeout); err != nil {
			return nil, err
		}
	}
	spec, err := scenarios.Lookup(o.scenario)
	if err != nil {
		return nil, scenarioErr(err)
	}
	if o.clientsSet {
		spec.Clients = o.clients
		if spec.Queue != nil && spec.Queue.Producers+spec.Queue.Consumers > 0 {
			// Keep the scenario's proportion of producers.
			q := *spec.Queue
			p := max(1, min(o.clients-1, o.clients*q.Producers/max(1, q.Producers+q.Consumers)))
			q.Producers, q.Consumers = p, o.clients-p
			spec.Queue = &q
		}
		if spec.Barrier != nil && spec.Barrier.Size > 0 && o.clients%spec.Barrier.Size != 0 {
			b := *spec.Barrier
			b.Size = 0 // every client in one barrier
			spec.Barrier = &b
		}
		if spec.Locks > o.clients {
			spec.Locks = o.clients
		}
		if spec.Semaphore != nil && spec.Semaphore.Leases > o.clients {
			sem := *spec.Semaphore
			sem.Leases = o.clients
			spec.Semaphore = &sem
		}
	}
	if o.durationSet {
		spec.Duration, spec.Ops = o.duration, 0
		if spec.Queue != nil {
			q := *spec.Queue
			q.Items = 0
			spec.Queue = &q
		}
	}
	if o.opsSet {
		spec.Ops, spec.Duration = o.ops, 0
		if spec.Queue != nil && spec.Queue.Items > 0 {
			q := *spec.Queue
			q.Items, spec.Ops = o.ops, 0
			spec.Queue = &q
		}
	}
	if o.timeoutSet {
		spec.SessionTimeout = g.sessionTimeout
	}
	if o.rateSet || o.arrival != "" {
		spec = spec.WithArrival(scenarios.ArrivalKind(o.arrival), o.rate)
		if spec.Arrival.Kind.Open() && spec.Arrival.Rate <= 0 {
			return nil, usageErr("--arrival %s needs a rate: add --rate R (operations per second)", o.arrival)
		}
	}
	spec.Thresholds = append(slices.Clone(spec.Thresholds), thresholds...)
	if err := spec.Validate(); err != nil {
		return nil, scenarioErr(err)
	}
	p := &loadPlan{spec: spec, runs: spec.Runs(), title: spec.Name, runID: loadgen.NewRunID()}
	out := o.out
	if out == "" {
		out = "zkherd-load-" + p.runID
	}
	dir, err := checkOutDir(out)
	if err != nil {
		return nil, err
	}
	p.out = dir
	return p, nil
}

// scenarioErr turns a scenarios error into a usage error: every line of a
// YAML error list, each with file:line.
func scenarioErr(err error) error {
	var list scenarios.ErrorList
	if errors.As(err, &list) && len(list) > 1 {
		return usageErr("scenario has %d mistakes:\n  %s", len(list), strings.ReplaceAll(list.Error(), "\n", "\n  "))
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "scenarios: ")
	return usageErr("%s", msg)
}

// checkOutDir makes sure the report can be written, before the run
// starts: dir is an empty or absent directory whose nearest existing
// ancestor is writable. Nothing is created.
func checkOutDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageErr("--out %s: %v", dir, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err == nil && !st.IsDir():
		return "", usageErr("--out %s: exists and is not a directory", dir)
	case err == nil:
		if err := probeWritable(abs); err != nil {
			return "", usageErr("--out %s: cannot write there: %v", dir, err)
		}
		return abs, nil
	case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return "", usageErr("--out %s: %v", dir, err)
	}
	parent := filepath.Dir(abs)
	for {
		st, err := os.Stat(parent)
		if err == nil {
			if !st.IsDir() {
				return "", usageErr("--out %s: %s is not a directory", dir, parent)
			}
			if err := probeWritable(parent); err != nil {
				return "", usageErr("--out %s: cannot create it in %s: %v", dir, parent, err)
			}
			return abs, nil
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", usageErr("--out %s: %v", dir, err)
		}
		next := filepath.Dir(parent)
		if next == parent {
			return "", usageErr("--out %s: no existing parent directory", dir)
		}
		parent = next
	}
}

// probeWritable creates and removes a temporary file in dir.
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".zkherd-probe-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// runLoad runs a validated plan; see zkherd load --help.
func runLoad(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	if o.dist.active() {
		return runDistributed(ctx, g, o, stdout, stderr)
	}
	plan, err := planLoad(g, o)
	if err != nil {
		return err
	}
	return executePlan(ctx, g, plan, o, stdout, stderr)
}

// executePlan starts a local ensemble if needed, runs every run of the
// plan, prints the summary and writes the report.
func executePlan(ctx context.Context, g *globalOptions, plan *loadPlan, o *loadOptions, stdout, stderr io.Writer) error {
	cs, haveServer, err := g.connectString()
	if err != nil {
		return err
	}
	local := !haveServer
	var ens *ensemble.Ensemble
	if local {
		ens, err = startLocalEnsemble(ctx, ensemble.Options{
			Nodes:   plan.spec.Effective().Ensemble,
			NoFsync: true,
			HeapMB:  heapFor(plan.spec.Effective().Clients),
		}, stderr)
		if err != nil {
			return err
		}
		defer ens.Stop()
		cs.Servers = ens.Servers()
	} else {
		for _, run := range plan.runs {
			if err := run.Spec.ValidateEnsemble(len(cs.Servers), false); err != nil {
				return scenarioErr(err)
			}
		}
	}
	server := cs.String()

	opts := loadgen.Options{
		Servers:        cs.Servers,
		Chroot:         cs.Chroot,
		SessionOptions: g.sessionOptions(),
		SourceAddrs:    o.sourceAddrs,
		RunID:          plan.runID,
	}
	if ens != nil {
		opts.Ensemble = ens // the scenario's server faults act on it
	}
	var (
		results []*loadgen.Result
		partial bool
	)
	if !o.noTUI && isTerminal(stdout) && isTerminal(os.Stdin) {
		results, partial, err = runWithTUI(ctx, plan, opts, server)
	} else {
		prog := newProgressLine(stderr)
		opts.Progress = prog.update
		opts.Logf = func(format string, args ...any) {
			prog.finish()
			fmt.Fprintf(stderr, format+"\n", args...)
		}
		results, partial, err = runAll(ctx, plan, opts, func(i int, run scenarios.Run) {
			prog.finish()
			if len(plan.runs) > 1 {
				fmt.Fprintf(stderr, "run %d of %d: %s (%s, %d clients)\n", i+1, len(plan.runs), run.Name, run.Recipe, run.Clients)
			}
		})
		prog.finish()
	}
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return ctx.Err()
	}
	rep := buildReport(plan, server, local, results, partial)
	width := report.Width
	if !isTerminal(stdout) {
		width = 0 // one line per item: files and scripts
	}
	if err := report.WriteSummaryWidth(stdout, rep, width); err != nil {
		return err
	}
	if plan.out != "" {
		if err := report.WriteDir(plan.out, rep); err != nil {
			return usageErr("%v", err)
		}
		where := filepath.Join(plan.out, "report.html")
		if _, err := os.Stat(where); err != nil {
			where = filepath.Join(plan.out, "report.json")
		}
		fmt.Fprintf(stdout, "\nreport: %s\n", where)
	}
	if failed := failedChecks(rep); len(failed) > 0 {
		return &exitError{code: exitCheckFailed, err: fmt.Errorf("correctness checks failed: %s", strings.Join(failed, "; "))}
	}
	if crossed := crossedThresholds(rep); len(crossed) > 0 {
		return &exitError{code: exitCheckFailed, err: fmt.Errorf("thresholds crossed: %s", strings.Join(crossed, "; "))}
	}
	if partial {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted: the run was stopped early and its report is marked partial")}
	}
	return nil
}

// runAll runs every run of the plan in turn, stopping after one that was
// cut short; starting is called before each run.
func runAll(ctx context.Context, plan *loadPlan, opts loadgen.Options, starting func(int, scenarios.Run)) (results []*loadgen.Result, partial bool, err error) {
	for i, run := range plan.runs {
		if ctx.Err() != nil {
			return results, true, nil
		}
		if starting != nil {
			starting(i, run)
		}
		res, err := loadgen.Run(ctx, run, opts)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				return results, true, nil
			}
			return results, false, usageErr("%s", strings.TrimPrefix(err.Error(), "loadgen: "))
		}
		results = append(results, res)
		if res.Partial {
			return results, true, nil
		}
	}
	return results, false, nil
}

// heapFor sizes the local ensemble's JVM heap for the sessions a run opens.
func heapFor(clients int) int {
	return min(256+clients/8, 2048)
}

// progressLine prints the live progress on stderr: rewritten in place on a
// terminal, one line every few seconds otherwise.
type progressLine struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	last     time.Time
	shown    bool
}

func newProgressLine(w io.Writer) *progressLine {
	return &progressLine{w: w, terminal: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progressLine) update(pr loadgen.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.State == "done" {
		return
	}
	if !p.terminal && time.Since(p.last) < 5*time.Second && pr.State != "stopping" {
		return
	}
	p.last = time.Now()
	elapsed := fmt.Sprintf("%5.1fs", pr.Window.Seconds())
	if pr.Duration > 0 {
		elapsed += fmt.Sprintf("/%v", pr.Duration)
	}
	if pr.State == "ramping up" {
		elapsed = fmt.Sprintf("%5.1fs", pr.Elapsed.Seconds())
	}
	p99 := pr.Main.P99
	if pr.Main.HasCorrection {
		p99 = pr.Main.CorrectedP99 // open model: from the intended start
	}
	line := fmt.Sprintf("%s %-10s %s  clients %d/%d  ops %d  rate %.0f/s  %s p99 %s  errors %d",
		pr.Name, pr.State, elapsed, pr.SessionsAlive, pr.Clients, pr.Ops, pr.Rate,
		pr.MainPhase, fmtMs(p99), pr.Errors)
	if len(pr.Violations) > 0 {
		line += fmt.Sprintf("  VIOLATIONS %d", len(pr.Violations))
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// finish ends the in-place line.
func (p *progressLine) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
	p.last = time.Time{}
}

// fmtMs prints milliseconds with the reports' unit rule.
func fmtMs(ms float64) string { return metrics.FormatMs(ms) }
