package tui

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/loadview"
	"github.com/zkherd/zkherd/tui/views/tree"
)

// ErrQuit is returned by RunLoad when the user quit (q or ctrl+c) while the
// run was still sending updates: the caller should stop the run as it would
// on a first Ctrl-C. (In the interface, Ctrl-C is a key, not a signal.)
var ErrQuit = errors.New("tui: quit by the user")

// DefaultUpdateInterval is the shortest time between two dashboard
// redraws from load snapshots: at most 10 updates per second.
const DefaultUpdateInterval = 100 * time.Millisecond

// DefaultConnectTimeout bounds the first connection of RunInspect: a
// live server opens a session in milliseconds, so a few seconds without
// one means no server answers, and the user should hear so at once.
const DefaultConnectTimeout = 3 * time.Second

// InspectOptions configure RunInspect.
type InspectOptions struct {
	// ConnectString is "host:port[,host:port...][/chroot]"; every member
	// listed is polled with four-letter words.
	ConnectString string
	// AdminURLs optionally maps a member's client address ("127.0.0.1:2181")
	// to its AdminServer ("http://127.0.0.1:8080/commands"), asked when a
	// four-letter word is not whitelisted (ensemble.Member.AdminURL).
	AdminURLs map[string]string
	// SessionTimeout defaults to recipes.DefaultSessionTimeout.
	SessionTimeout time.Duration
	// ConnectTimeout bounds the wait for the first session; defaults to
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Auth is digest credentials "user:password", never shown.
	Auth string
	// TLS, when set, reaches the servers over TLS (connstr.TLS.Config).
	TLS *tls.Config
	// AllowWrites enables delete and set-data in the Tree view, each asking
	// for confirmation. Read-only by default.
	AllowWrites bool
	// NoColor drops colours (NO_COLOR in the environment does too); bold
	// and reverse video remain.
	NoColor bool
	// PollInterval is the time between cluster snapshots; defaults to
	// inspect.DefaultPollInterval.
	PollInterval time.Duration
	// ScanRoots, NoWatches, WatchBudget and WalkRate bound what the
	// inspector asks of the servers (see inspect.Options).
	ScanRoots   []string
	NoWatches   bool
	WatchBudget int
	WalkRate    int
	// Name names a value the user gave ("auth") in the views' notices as
	// the command calls it (inspect.Options.Name); nil names it bare.
	Name func(input string) string
	// Input and Output default to the terminal (stdin/stdout).
	Input  io.Reader
	Output io.Writer

	// size fixes the window size (tests, where Output is no terminal).
	size [2]int
}

// Inspector is what the inspector reading cs is given of o: the one
// place the terminal inspector, the load dashboard's and the headless
// exporter take their inspect.Options from. It leaves writes off
// (AllowWrites): only RunInspect's Tree may write, when asked to.
func (o *InspectOptions) Inspector(cs connstr.ConnectString) inspect.Options {
	return inspect.Options{
		Servers: cs.Servers, AdminURLs: o.AdminURLs, Chroot: cs.Chroot, SessionTimeout: o.SessionTimeout,
		Auth: o.Auth, TLS: o.TLS, PollInterval: o.PollInterval,
		ScanRoots: o.ScanRoots, NoWatches: o.NoWatches, WatchBudget: o.WatchBudget, WalkRate: o.WalkRate, Name: o.Name,
	}
}

// RunInspect runs `zkherd inspect`: it connects (failing fast, before the
// screen opens, if no server answers) and shows the Tree, Locks, Queues,
// Sessions and Servers views until the user quits or ctx ends. It returns
// nil when the user quits.
func RunInspect(ctx context.Context, opts InspectOptions) error {
	cs, err := connstr.Parse(opts.ConnectString)
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	o := opts.Inspector(cs)
	o.AllowWrites = opts.AllowWrites
	cctx, cancel := context.WithTimeout(ctx, cmp.Or(opts.ConnectTimeout, DefaultConnectTimeout))
	in, err := inspect.Open(cctx, o)
	cancel()
	if err != nil {
		return err
	}
	defer in.Close()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	f := feeds{snapshots: in.Run(ctx), changes: in.Changes(), take: in.TakeChanges, shown: in.SetShown}
	title := strings.Join(cs.Servers, ",")
	if cs.Chroot != "" {
		// Every path shown is relative to it (package inspect).
		title += " · chroot " + cs.Chroot
	}
	if opts.AllowWrites {
		title += " · WRITES ALLOWED"
	} else {
		title += " · read-only"
	}
	order := tabs(func(s viewSpec) int { return s.inspect })
	m := newModel(ctx, common.New(80, 24), in, order, f, title)
	_, err = run(ctx, m, opts.NoColor, opts.Input, opts.Output, opts.size)
	if err != nil && ctx.Err() != nil {
		return nil // ended by the caller
	}
	return err
}

// LoadOptions configure RunLoad.
type LoadOptions struct {
	// NoColor drops colours (NO_COLOR in the environment does too).
	NoColor bool
	// UpdateInterval is the shortest time between redraws from updates;
	// defaults to DefaultUpdateInterval (10 per second).
	UpdateInterval time.Duration
	// Inspect, when set, adds the cluster views (Locks, Sessions,
	// Servers, Tree, Queues) of that ensemble beside the dashboard, polled
	// by a separate read-only session of their own.
	Inspect *InspectOptions
	// ExitWhenDone returns as soon as updates closes, instead of showing
	// the final frame until the user quits.
	ExitWhenDone bool
	// Input and Output default to the terminal (stdin/stdout).
	Input  io.Reader
	Output io.Writer

	// size fixes the window size (tests, where Output is no terminal).
	size [2]int
}

// RunLoad shows the load dashboard, drawing the latest snapshot received
// on updates at most 10 times a second. It never slows the sender: updates
// is read as fast as it is written, and snapshots that arrive between two
// redraws are replaced by newer ones.
//
// The sender closes updates when the run ends; the final snapshot stays on
// screen until the user quits (or at once with ExitWhenDone), and RunLoad
// returns nil. If the user quits first, RunLoad returns ErrQuit and the
// caller should stop the run. When ctx ends, RunLoad returns ctx.Err().
func RunLoad(ctx context.Context, updates <-chan loadview.Snapshot, opts LoadOptions) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	every := opts.UpdateInterval
	if every <= 0 {
		every = DefaultUpdateInterval
	}
	ptrs := make(chan *loadview.Snapshot)
	go func() {
		defer close(ptrs)
		for s := range updates {
			select {
			case ptrs <- &s:
			case <-ctx.Done():
				// Keep draining so the sender never blocks on us.
				for range updates {
				}
				return
			}
		}
	}()
	f := feeds{loads: common.Latest(ctx, ptrs, every)}
	order := []viewID{viewLoad}
	var src *inspect.Inspector
	title := ""
	if opts.Inspect != nil {
		cs, err := connstr.Parse(opts.Inspect.ConnectString)
		if err != nil {
			return fmt.Errorf("tui: %w", err)
		}
		cctx, cancel := context.WithTimeout(ctx, cmp.Or(opts.Inspect.ConnectTimeout, DefaultConnectTimeout))
		src, err = inspect.Open(cctx, opts.Inspect.Inspector(cs)) // read-only: no AllowWrites
		cancel()
		if err != nil {
			return err
		}
		defer src.Close()
		// The cluster views poll the servers only once one is shown:
		// while the user watches the dashboard, the run under test pays
		// nothing for them.
		start := make(chan struct{})
		f.wake = sync.OnceFunc(func() { close(start) })
		f.snapshots = startWhen(ctx, start, src.Run)
		f.changes, f.take, f.shown = src.Changes(), src.TakeChanges, src.SetShown
		order = append(order, tabs(func(s viewSpec) int { return s.load })...)
		title = cs.String()
	}
	var treeSrc tree.Source // stays nil without an ensemble to browse
	if src != nil {
		treeSrc = src
	}
	m := newModel(ctx, common.New(80, 24), treeSrc, order, f, title)
	m.exitWhenDone = opts.ExitWhenDone
	final, err := run(ctx, m, opts.NoColor, opts.Input, opts.Output, opts.size)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return err
	case final.quit && !final.loadDone:
		return ErrQuit
	}
	return nil
}

// startWhen calls run once start is closed and relays what it sends; the
// returned channel closes with run's, or when ctx ends first.
func startWhen[T any](ctx context.Context, start <-chan struct{}, run func(context.Context) <-chan T) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		select {
		case <-start:
		case <-ctx.Done():
			return
		}
		for v := range run(ctx) {
			select {
			case out <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// run runs the program with the colour profile the environment and
// noColor allow, and returns the final model.
func run(ctx context.Context, m Model, noColor bool, input io.Reader, output io.Writer, size [2]int) (Model, error) {
	if output == nil {
		output = os.Stdout
	}
	profile := colorprofile.Detect(output, os.Environ())
	if noColor && profile > colorprofile.ASCII {
		profile = colorprofile.ASCII
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithColorProfile(profile), tea.WithOutput(output)}
	if input != nil {
		opts = append(opts, tea.WithInput(input))
	}
	if size[0] > 0 && size[1] > 0 {
		opts = append(opts, tea.WithWindowSize(size[0], size[1]))
	}
	final, err := tea.NewProgram(m, opts...).Run()
	fm, _ := final.(Model)
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fm, fmt.Errorf("tui: %w", err)
	}
	if err != nil {
		return fm, err
	}
	return fm, nil
}
