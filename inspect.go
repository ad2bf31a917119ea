package main

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/cluster"
	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/exporter"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui"
)

// headlessOptions are the flags of `zkherd inspect --headless`.
type headlessOptions struct {
	headless    bool
	metricsAddr string
	maxPaths    int
	// adminURLs is --admin-url, one per --server member.
	adminURLs []string
}

func newInspectCmd(g *globalOptions) *cobra.Command {
	o := tui.InspectOptions{Name: flagName}
	h := headlessOptions{}
	cmd := newCommand("inspect", "Live terminal view of an ensemble: tree, locks, queues, sessions, servers", "inspect", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if err := h.check(); err != nil {
			return err
		}
		if h.headless && !cmd.Flags().Changed("poll-interval") {
			o.PollInterval = exporter.DefaultPollInterval // scraped every 15 s or more
		}
		if h.headless && !cmd.Flags().Changed("walk-rate") {
			o.WalkRate = exporter.HeadlessWalkRate // nobody waits at a terminal
		}
		return runInspect(cmd.Context(), g, &o, h, cmd.ErrOrStderr())
	})
	cmd.Flags().BoolVar(&h.headless, "headless", false, "no terminal: run as a Prometheus exporter on --metrics-addr until stopped")
	cmd.Flags().StringVar(&h.metricsAddr, "metrics-addr", "", "with --headless: serve Prometheus metrics (locks, queues, members) on HOST:PORT/metrics")
	cmd.Flags().IntVar(&h.maxPaths, "metrics-max-paths", exporter.DefaultMaxPaths, "with --headless: at most this many lock and queue paths as label values each; the rest are summed under path=\"(other)\"")
	cmd.Flags().StringSliceVar(&h.adminURLs, "admin-url", nil, "AdminServer base URL per server, in --server order, asked when a four-letter word is not whitelisted (default: a running cluster up's, else each host's port 8080)")
	cmd.Flags().BoolVar(&o.AllowWrites, "allow-writes", false, "allow creating, editing and deleting nodes and setting ACLs (each asks for confirmation)")
	cmd.Flags().BoolVar(&o.NoColor, "no-color", false, "no colours (NO_COLOR in the environment does the same)")
	cmd.Flags().DurationVar(&o.PollInterval, "poll-interval", inspect.DefaultPollInterval, "time between polls of the servers (stretched up to 16x while they are busy; 5s by default with --headless)")
	cmd.Flags().StringSliceVar(&o.ScanRoots, "scan-root", nil, "where to look for locks and queues (repeatable; default /)")
	cmd.Flags().BoolVar(&o.NoWatches, "no-watches", false, "never ask the servers who watches what (wchp): waiters show \"watch unknown\"")
	cmd.Flags().IntVar(&o.WatchBudget, "watch-budget", inspect.DefaultWatchBudget, "skip the watch list (wchp) of a server holding more watches than this (-1: no limit)")
	cmd.Flags().IntVar(&o.WalkRate, "walk-rate", inspect.DefaultWalkRate, "the tree walk that finds locks and queues and the searches together: at most this many requests a second (a listing of 100 names counts as one more; 5 by default with --headless)")
	return cmd
}

// check refuses headless flags that do not go together.
func (h headlessOptions) check() error {
	switch {
	case h.headless && h.metricsAddr == "":
		return usageErr("--headless needs --metrics-addr HOST:PORT: the exporter's only output is its metrics endpoint")
	case !h.headless && h.metricsAddr != "":
		return usageErr("--metrics-addr serves the inspector's metrics without a terminal: add --headless")
	case h.maxPaths < 1:
		return usageErr("--metrics-max-paths %d: must be at least 1", h.maxPaths)
	}
	return nil
}

// runInspect runs the inspector with o, its own flags, and the shared ones.
func runInspect(ctx context.Context, g *globalOptions, o *tui.InspectOptions, h headlessOptions, stderr io.Writer) error {
	if err := g.checkAuth(); err != nil {
		return err
	}
	if err := loadrun.CheckSessionTimeout(g.sessionTimeout); err != nil {
		return err
	}
	if o.PollInterval < 100*time.Millisecond {
		return usageErr("--poll-interval %s is too short: use 100ms or more (1s is the default)", o.PollInterval)
	}
	if o.WalkRate < 1 {
		return usageErr("--walk-rate %d: must be at least 1 (requests a second)", o.WalkRate)
	}
	if o.WatchBudget == 0 {
		return usageErr("--watch-budget 0 would never list watches: use --no-watches for that, or a positive budget")
	}
	cs, ok, err := g.connectString()
	if err != nil {
		return err
	}
	connect := cs.String()
	if ok {
		if len(h.adminURLs) > 0 && len(h.adminURLs) != len(cs.Servers) {
			return usageErr("--admin-url: %d given for %d servers; give one per server, in --server order", len(h.adminURLs), len(cs.Servers))
		}
		if err := g.reachable(ctx, cs); err != nil {
			return err
		}
		o.AdminURLs = cluster.AdminURLs(cs.Servers, h.adminURLs, g.tlsCfg != nil)
	} else {
		ens, err := loadrun.StartEnsemble(ctx, ensemble.Options{Nodes: 1, NoFsync: true, HeapMB: clusterHeapMB}, os.Stderr)
		if err != nil {
			return err
		}
		defer ens.Stop()
		connect = ens.ConnectString()
		o.AdminURLs = map[string]string{}
		for _, m := range ens.Members() {
			if m.AdminURL != "" {
				o.AdminURLs[m.ClientAddr] = m.AdminURL
			}
		}
	}
	o.ConnectString, o.SessionTimeout, o.ConnectTimeout, o.Auth, o.TLS = connect, g.sessionTimeout, g.connectTimeout, g.auth, g.tlsCfg
	oneCore()
	if h.headless {
		err = runHeadless(ctx, o, h, stderr)
	} else {
		err = tui.RunInspect(ctx, *o)
	}
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case errors.Is(err, recipes.ErrNoSession):
		return g.connectErr(connect, err)
	}
	return usageErr("%v", err)
}

// oneCore runs the inspector's Go code on one core at a time, unless the
// GOMAXPROCS environment variable says otherwise.
//
// The inspector waits on the servers nearly all the time (0.02 cores in
// the terminal on the 205,000-znode benchmark server), but each poll's
// work (merging the members' answers, making them inert, drawing, and
// the Go collector after them) came in one burst a second that ran on
// every core at once: on the 2-core benchmark machine another client's
// writes in the ~80 ms of that burst were slow three to five times as
// often, and its setData p99 rose 1.23x with the terminal and a search
// running (docs/BENCHMARKS.md). An operator runs the inspector beside the
// servers or the clients as often as on a laptop of their own; on one
// core the burst leaves the others free (1.0x in the same benchmark).
//
// Assumption: one core keeps up with the polls. A poll that takes longer
// delays the next one (the inspector paces itself by its polls), and the
// status line says when a snapshot is late.
func oneCore() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// runHeadless runs the inspector as an exporter with the options the
// terminal inspector would have used.
func runHeadless(ctx context.Context, o *tui.InspectOptions, h headlessOptions, stderr io.Writer) error {
	cs, err := connstr.Parse(o.ConnectString)
	if err != nil {
		return err
	}
	return exporter.ServeInspector(ctx, exporter.HeadlessOptions{
		Inspect:        o.Inspector(cs),
		ConnectTimeout: o.ConnectTimeout, Addr: h.metricsAddr, MaxPaths: h.maxPaths, Log: stderr,
	})
}
