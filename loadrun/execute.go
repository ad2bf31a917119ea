package loadrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scenarios"
)

// Sink receives what a run says while it goes. Its methods may be called
// from the run's goroutines; they must not block for long.
type Sink interface {
	// Starting is called before run i of the plan starts; line says so
	// for a log ("" when there is nothing to say).
	Starting(i int, run scenarios.Run, line string)
	// Progress is the generator's report, once per interval.
	Progress(loadgen.Progress)
	// Notice is a line the user should read (how connections are spread,
	// a fault injected, ...).
	Notice(line string)
}

// DetailSink is a Sink that draws more than a progress line (the load
// dashboard): its progress carries every phase's histogram, the timeline
// and the lock's wait graph (loadgen.Options.ProgressPhases).
type DetailSink interface {
	Sink
	LiveDetail() bool
}

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

// Execute runs every run of plan in turn on env, reporting to sink, and
// stops after one that was cut short (ctx ended) or failed.
func Execute(ctx context.Context, env *Env, plan *Plan, sink Sink) Outcome {
	return execution{}.run(ctx, env.LoadOptions(), plan, sink)
}

func (x execution) run(ctx context.Context, opts loadgen.Options, plan *Plan, sink Sink) Outcome {
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
	if d, ok := sink.(DetailSink); ok && d.LiveDetail() {
		opts.ProgressPhases = true
	}
	var out Outcome
	for i, run := range plan.Runs {
		if ctx.Err() != nil {
			out.Partial = true
			return out
		}
		sink.Starting(i, run, announce(i, run))
		runOpts := opts
		if t, ok := sink.(tee); ok {
			runOpts.OnInterval = t.intervalHook(run.Name)
		}
		stepCtx := ctx
		var watch *abortWatch
		if plan.AbortOnFail && len(run.Thresholds) > 0 {
			wctx, stop := context.WithCancel(ctx)
			defer stop()
			watch = &abortWatch{thresholds: run.Thresholds, stop: stop}
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

// Display shows a plan's runs while they go. It calls exec, which runs
// them and reports to the sink it is given, and returns exec's outcome; it
// may cut the runs short (ctx) or mark them partial. The live dashboard is
// one; nil means a progress line on stderr.
type Display func(ctx context.Context, plan *Plan, where Where, exec func(context.Context, Sink) Outcome) Outcome

// Where is where a plan's runs go, as a Display needs it: what anything
// that connects uses (the connect string and the TLS settings), and the
// label people read, which may carry more than an address (the local
// ensemble's --server-config) and is never parsed.
type Where struct {
	Server connstr.ConnectString
	TLS    *tls.Config
	Label  string
}

// LineSink prints the live progress on w: rewritten in place on a
// terminal, one line every few seconds otherwise; notices and starting
// lines on lines of their own.
type LineSink struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	last     time.Time
	shown    bool
}

// NewLineSink returns a LineSink writing to w.
func NewLineSink(w io.Writer) *LineSink {
	return &LineSink{w: w, terminal: IsTerminal(w)}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Starting prints line, if any.
func (p *LineSink) Starting(_ int, _ scenarios.Run, line string) {
	if line != "" {
		p.Notice(line)
	} else {
		p.Finish()
	}
}

// Notice prints s on a line of its own.
func (p *LineSink) Notice(s string) {
	p.Finish()
	fmt.Fprintln(p.w, s)
}

// Progress prints the progress line.
func (p *LineSink) Progress(pr loadgen.Progress) {
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
		pr.MainPhase, format.Ms(p99), pr.Errors)
	if len(pr.Violations) > 0 {
		line += fmt.Sprintf("  VIOLATIONS %d", len(pr.Violations))
	}
	if p.terminal && len([]rune(line)) >= report.Width {
		line = compactProgress(pr, strings.TrimSpace(elapsed), format.Ms(p99))
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// compactProgress is the progress line for a terminal row too narrow for
// the full one (rewriting in place with "\r" fails once a line wraps):
// what matters first, the clients only while some are missing, and cut
// to fit.
func compactProgress(pr loadgen.Progress, elapsed, p99 string) string {
	parts := []string{pr.Name, pr.State, elapsed}
	if len(pr.Violations) > 0 {
		parts = append(parts, fmt.Sprintf("VIOLATIONS %d", len(pr.Violations)))
	}
	parts = append(parts, fmt.Sprintf("errors %s", format.Count(pr.Errors)))
	if pr.SessionsAlive != pr.Clients {
		parts = append(parts, fmt.Sprintf("clients %d/%d", pr.SessionsAlive, pr.Clients))
	}
	parts = append(parts, fmt.Sprintf("ops %s", format.Count(pr.Ops)), fmt.Sprintf("%.0f/s", pr.Rate),
		fmt.Sprintf("%s p99 %s", pr.MainPhase, p99))
	line := strings.Join(parts, " ")
	if r := []rune(line); len(r) >= report.Width {
		line = string(r[:report.Width-2]) + "…"
	}
	return line
}

// Finish ends the in-place line.
func (p *LineSink) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
	p.last = time.Time{}
}

// lineDisplay runs exec with a LineSink on w.
func lineDisplay(w io.Writer) Display {
	return func(ctx context.Context, _ *Plan, _ Where, exec func(context.Context, Sink) Outcome) Outcome {
		sink := NewLineSink(w)
		defer sink.Finish()
		return exec(ctx, sink)
	}
}

// runError is a run's failure for the user.
func runError(err error) error {
	var ee *exit.Error
	if errors.As(err, &ee) || errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, ErrDisplay) {
		return exit.AsUsage(fmt.Errorf("%w (use --no-tui)", reason(err)))
	}
	return exit.AsUsage(reason(err))
}
