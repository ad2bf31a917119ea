package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui"
)

type inspectOptions struct {
	allowWrites  bool
	noColor      bool
	pollInterval time.Duration
	scanRoots    []string
	noWatches    bool
	watchBudget  int
}

func newInspectCmd(g *globalOptions) *cobra.Command {
	o := inspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Live terminal view of an ensemble: tree, locks, queues, sessions, servers",
		Long: `Opens a live terminal view of a ZooKeeper ensemble: the znode tree, lock
waiter chains (holder -> waiter -> waiter, who watches whom), queue depth,
sessions and watches, and every member's stats. Read-only unless
--allow-writes is given; then, in the Tree, each write says what it will do
and asks first: c create ([-e] [-s] NAME [DATA]), e edit the data in
$EDITOR (refused if the node changed meanwhile), d delete (a subtree after
counting it), A set the ACL; y copies the path (OSC 52) in any mode.

What it asks of the servers is bounded: see docs/BENCHMARKS.md ("what each
poll costs the servers") and --poll-interval, --scan-root, --no-watches and
--watch-budget. Without --server a local 1-node ensemble is started and
removed on exit.

Views: 1 Tree, 2 Locks, 3 Queues, 4 Sessions, 5 Servers; [ and ] step
through them. Tab and shift+tab move between the panes of a view (the Tree's
list and data). Arrows or hjkl move (l or enter opens, h goes to the parent),
/ filters, : takes a command (:cd PATH), r refreshes, esc goes back, ? shows
every key, q quits. With --allow-writes, d deletes and e sets data, each
after a confirmation.`,
		Example: `  zkherd inspect --server 127.0.0.1:2181
  zkherd inspect --server zk1:2181,zk2:2181,zk3:2181/app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInspect(cmd.Context(), g, o)
		},
	}
	cmd.Flags().BoolVar(&o.allowWrites, "allow-writes", false, "allow creating, editing and deleting nodes and setting ACLs (each asks for confirmation)")
	cmd.Flags().BoolVar(&o.noColor, "no-color", false, "no colours (NO_COLOR in the environment does the same)")
	cmd.Flags().DurationVar(&o.pollInterval, "poll-interval", inspect.DefaultPollInterval, "time between polls of the servers (stretched up to 16x while they are busy)")
	cmd.Flags().StringSliceVar(&o.scanRoots, "scan-root", nil, "where to look for locks and queues (repeatable; default /)")
	cmd.Flags().BoolVar(&o.noWatches, "no-watches", false, "never ask the servers who watches what (wchp): waiters show \"watch unknown\"")
	cmd.Flags().IntVar(&o.watchBudget, "watch-budget", inspect.DefaultWatchBudget, "skip the watch list (wchp) of a server holding more watches than this (-1: no limit)")
	return cmd
}

func runInspect(ctx context.Context, g *globalOptions, o inspectOptions) error {
	if err := g.checkAuth(); err != nil {
		return err
	}
	if err := loadrun.CheckSessionTimeout(g.sessionTimeout); err != nil {
		return err
	}
	if o.pollInterval < 100*time.Millisecond {
		return usageErr("--poll-interval %s is too short: use 100ms or more (1s is the default)", o.pollInterval)
	}
	if o.watchBudget == 0 {
		return usageErr("--watch-budget 0 would never list watches: use --no-watches for that, or a positive budget")
	}
	cs, ok, err := g.connectString()
	if err != nil {
		return err
	}
	connect := cs.String()
	if ok {
		if err := g.reachable(ctx, cs); err != nil {
			return err
		}
	} else {
		ens, err := loadrun.StartEnsemble(ctx, ensemble.Options{Nodes: 1, NoFsync: true, HeapMB: clusterHeapMB}, os.Stderr)
		if err != nil {
			return err
		}
		defer ens.Stop()
		connect = ens.ConnectString()
	}
	err = tui.RunInspect(ctx, tui.InspectOptions{
		ConnectString:  connect,
		SessionTimeout: g.sessionTimeout,
		ConnectTimeout: g.connectTimeout,
		Auth:           g.auth,
		TLS:            g.tlsCfg,
		AllowWrites:    o.allowWrites,
		NoColor:        o.noColor,
		PollInterval:   o.pollInterval,
		ScanRoots:      o.scanRoots,
		NoWatches:      o.noWatches,
		WatchBudget:    o.watchBudget,
	})
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case errors.Is(err, recipes.ErrNoSession):
		return g.connectErr(connect, err)
	}
	return usageErr("%v", err)
}
