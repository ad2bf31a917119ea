package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/internal/pkgerr"
)

// Launcher starts the joining processes of a run.
type Launcher interface {
	// Check finds out, before the run starts, whether the processes can
	// be started (the binary, the hosts), so that a mistake costs nothing.
	Check(ctx context.Context) error
	// Start starts the processes, each running j; they stop when ctx is
	// cancelled, and Group.Close ends them.
	Start(ctx context.Context, j Join) (*Group, error)
	// Processes is how many processes Start starts.
	Processes() int
}

// Join is what every launched process runs: zkherd with Args, its
// environment extended with Env (secrets go there, never in Args, which
// anyone on the host can read in ps).
type Join struct {
	Args []string
	Env  map[string]string
}

// DefaultGrace is how long Close lets interrupted processes stop on
// their own (a joiner publishes what it has and removes its znodes)
// before it kills them.
const DefaultGrace = 15 * time.Second

// waitDelay bounds the wait for a process's output once it has exited
// (a descendant still holding the pipe).
const waitDelay = 5 * time.Second

// Group is the processes one launcher started: it streams their output
// and is the only one that stops and reaps them.
type Group struct {
	out     *lineWriter
	procs   []*proc
	stopCtx func() bool // stops the interrupt on ctx's cancellation

	// oneExited is closed when the first process has been reaped;
	// firstExit says which and how (under firstOnce).
	oneExited chan struct{}
	firstOnce sync.Once
	firstExit string
}

// OneExited is closed as soon as one process of the group has ended, for
// whatever reason: a run waiting for it to arrive can stop waiting.
func (g *Group) OneExited() <-chan struct{} { return g.oneExited }

// FirstExit says which process ended first and how ("process 3 exited
// with status 2"), once OneExited is closed; "" before.
func (g *Group) FirstExit() string {
	select {
	case <-g.oneExited:
		return g.firstExit
	default:
		return ""
	}
}

// proc is one started process; exited is closed once it has been reaped
// and its output flushed, err set before.
type proc struct {
	name      string
	cmd       *exec.Cmd
	interrupt func() error // ask it to stop (what Ctrl-C does)
	kill      func() error // stop it now
	// setup, when set, runs before the process starts; started after it
	// started, done after it was reaped or failed to start.
	setup   func() error
	started func()
	done    func()
	exited  chan struct{}
	err     error
}

// start starts p.
func (p *proc) start() error {
	if p.setup != nil {
		if err := p.setup(); err != nil {
			return err
		}
	}
	err := p.cmd.Start()
	if p.started != nil {
		p.started()
	}
	if err != nil && p.done != nil {
		p.done()
	}
	return err
}

// newGroup starts procs already built (their commands not started yet);
// on a failure it ends those it started.
func newGroup(ctx context.Context, w *lineWriter, procs []*proc) (*Group, error) {
	g := &Group{out: w, oneExited: make(chan struct{})}
	for _, p := range procs {
		if err := p.start(); err != nil {
			_ = g.Close(0, DefaultGrace)
			return nil, pkgerr.Wrap("launch", fmt.Errorf("start %s: %w", p.name, err))
		}
		p.exited = make(chan struct{})
		g.procs = append(g.procs, p)
		go g.reap(p)
	}
	g.stopCtx = context.AfterFunc(ctx, g.Interrupt)
	return g, nil
}

// reap waits for p, says how it ended when it failed, and marks it exited.
func (g *Group) reap(p *proc) {
	defer close(p.exited)
	p.err = p.cmd.Wait()
	if p.done != nil {
		p.done()
	}
	g.out.flush(p.name)
	var ee *exec.ExitError
	how := "exited with status 0"
	switch {
	case p.err == nil:
	case errors.As(p.err, &ee) && ee.Exited():
		how = fmt.Sprintf("exited with status %d", ee.ExitCode())
		g.out.line(p.name, how)
	default:
		how = "ended: " + p.err.Error()
		g.out.line(p.name, how)
	}
	g.firstOnce.Do(func() {
		g.firstExit = p.name + " " + how
		close(g.oneExited)
	})
}

// Interrupt asks every process still running to stop, as Ctrl-C would.
func (g *Group) Interrupt() {
	for _, p := range g.procs {
		select {
		case <-p.exited:
		default:
			_ = p.interrupt()
		}
	}
}

// Close ends the group and returns once every process has been reaped:
// it waits up to wait for them to end on their own, then interrupts
// those still running, and kills those still running grace later.
// The error names the processes that failed or had to be killed.
func (g *Group) Close(wait, grace time.Duration) error {
	if g.stopCtx != nil {
		g.stopCtx()
	}
	if !g.waitAll(wait) {
		g.Interrupt()
		if !g.waitAll(grace) {
			for _, p := range g.procs {
				select {
				case <-p.exited:
				default:
					g.out.line(p.name, fmt.Sprintf("still running %v after the interrupt: killed", grace))
					_ = p.kill()
				}
			}
			g.waitAll(-1)
		}
	}
	var errs []error
	for _, p := range g.procs {
		if p.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, p.err))
		}
	}
	return errors.Join(errs...)
}

// Exited is closed once every process of the group has been reaped.
func (g *Group) Exited() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		g.waitAll(-1)
	}()
	return ch
}

// waitAll waits up to d (forever when d < 0) for every process to be
// reaped, and says whether they all were.
func (g *Group) waitAll(d time.Duration) bool {
	var deadline <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		deadline = t.C
	}
	for _, p := range g.procs {
		select {
		case <-p.exited:
		case <-deadline:
			return false
		}
	}
	return true
}

// lineWriter writes the output of several processes to one writer, a
// line at a time, each line with its process's name in front and made
// inert (a remote process's output reaches this terminal).
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	partial map[string]*bytes.Buffer
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: w, partial: map[string]*bytes.Buffer{}}
}

// stream is the writer of the output stream kind ("stdout", "stderr")
// of the process name.
func (lw *lineWriter) stream(name, kind string) io.Writer {
	key := name + "\x00" + kind
	return writerFunc(func(b []byte) (int, error) {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		buf := lw.partial[key]
		if buf == nil {
			buf = &bytes.Buffer{}
			lw.partial[key] = buf
		}
		buf.Write(b)
		for {
			i := bytes.IndexByte(buf.Bytes(), '\n')
			if i < 0 {
				break
			}
			line := buf.Next(i + 1)
			lw.writeLocked(name, string(bytes.TrimRight(line, "\r\n")))
		}
		return len(b), nil
	})
}

// line writes one line of the launcher's own about the process name.
func (lw *lineWriter) line(name, text string) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.writeLocked(name, text)
}

// flush writes what is left of the last lines of the process name.
func (lw *lineWriter) flush(name string) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for _, kind := range []string{"stdout", "stderr"} {
		if buf := lw.partial[name+"\x00"+kind]; buf != nil && buf.Len() > 0 {
			lw.writeLocked(name, buf.String())
			buf.Reset()
		}
	}
}

func (lw *lineWriter) writeLocked(name, text string) {
	// A write error (the terminal gone) must not stop the processes'
	// pipes from draining: it is dropped, the processes run on.
	_, _ = fmt.Fprintf(lw.w, "[%s] %s\n", name, inert.String(text))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
