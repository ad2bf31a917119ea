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

func newInspectCmd(g *globalOptions) *cobra.Command {
	o := tui.InspectOptions{}
	cmd := newCommand("inspect", "Live terminal view of an ensemble: tree, locks, queues, sessions, servers", "inspect", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		return runInspect(cmd.Context(), g, &o)
	})
	cmd.Flags().BoolVar(&o.AllowWrites, "allow-writes", false, "allow creating, editing and deleting nodes and setting ACLs (each asks for confirmation)")
	cmd.Flags().BoolVar(&o.NoColor, "no-color", false, "no colours (NO_COLOR in the environment does the same)")
	cmd.Flags().DurationVar(&o.PollInterval, "poll-interval", inspect.DefaultPollInterval, "time between polls of the servers (stretched up to 16x while they are busy)")
	cmd.Flags().StringSliceVar(&o.ScanRoots, "scan-root", nil, "where to look for locks and queues (repeatable; default /)")
	cmd.Flags().BoolVar(&o.NoWatches, "no-watches", false, "never ask the servers who watches what (wchp): waiters show \"watch unknown\"")
	cmd.Flags().IntVar(&o.WatchBudget, "watch-budget", inspect.DefaultWatchBudget, "skip the watch list (wchp) of a server holding more watches than this (-1: no limit)")
	return cmd
}

// runInspect runs the inspector with o, its own flags, and the shared ones.
func runInspect(ctx context.Context, g *globalOptions, o *tui.InspectOptions) error {
	if err := g.checkAuth(); err != nil {
		return err
	}
	if err := loadrun.CheckSessionTimeout(g.sessionTimeout); err != nil {
		return err
	}
	if o.PollInterval < 100*time.Millisecond {
		return usageErr("--poll-interval %s is too short: use 100ms or more (1s is the default)", o.PollInterval)
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
	o.ConnectString, o.SessionTimeout, o.ConnectTimeout, o.Auth, o.TLS = connect, g.sessionTimeout, g.connectTimeout, g.auth, g.tlsCfg
	err = tui.RunInspect(ctx, *o)
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case errors.Is(err, recipes.ErrNoSession):
		return g.connectErr(connect, err)
	}
	return usageErr("%v", err)
}
