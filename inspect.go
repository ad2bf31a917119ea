package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/tui"
)

type inspectOptions struct {
	allowWrites bool
	noColor     bool
}

func newInspectCmd(g *globalOptions) *cobra.Command {
	o := inspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Live terminal view of an ensemble: tree, locks, queues, sessions, servers",
		Long: `Opens a live terminal view of a ZooKeeper ensemble: the znode tree, lock
waiter chains (holder -> waiter -> waiter, who watches whom), queue depth,
sessions and watches, and every member's stats. Read-only unless
--allow-writes is given (then delete and set-data each ask first).

Without --server a local 1-node ensemble is started and removed on exit.

Keys: ? help, tab/1-5 views, arrows or hjkl, / filter, : command, esc back, q quit.`,
		Example: `  zkherd inspect --server 127.0.0.1:2181
  zkherd inspect --server zk1:2181,zk2:2181,zk3:2181/app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInspect(cmd.Context(), g, o)
		},
	}
	cmd.Flags().BoolVar(&o.allowWrites, "allow-writes", false, "allow deleting nodes and setting data (each asks for confirmation)")
	cmd.Flags().BoolVar(&o.noColor, "no-color", false, "no colours (NO_COLOR in the environment does the same)")
	return cmd
}

func runInspect(ctx context.Context, g *globalOptions, o inspectOptions) error {
	if err := g.checkAuth(); err != nil {
		return err
	}
	if err := validateSessionTimeout(g.sessionTimeout); err != nil {
		return err
	}
	cs, ok, err := g.connectString()
	if err != nil {
		return err
	}
	connect := cs.String()
	if !ok {
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
		Auth:           g.auth,
		AllowWrites:    o.allowWrites,
		NoColor:        o.noColor,
	})
	if err != nil && ctx.Err() == nil {
		return usageErr("%v", err)
	}
	return nil
}
