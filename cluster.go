package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/ensemble"
)

func newClusterCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start a local ZooKeeper ensemble, or show the status of one",
	}
	cmd.AddCommand(newClusterUpCmd(g), newClusterStatusCmd(g))
	return cmd
}

type clusterUpOptions struct {
	nodes int
	fsync bool
	dir   string
}

func newClusterUpCmd(g *globalOptions) *cobra.Command {
	o := clusterUpOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local 1- or 3-node ensemble on 127.0.0.1 and keep it until Ctrl-C",
		Example: `  zkherd cluster up --nodes 3
  zkherd cluster status --server <printed connect string>`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.nodes != 1 && o.nodes != 3 {
				return usageErr("--nodes %d: choose 1 or 3", o.nodes)
			}
			return runClusterUp(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().IntVar(&o.nodes, "nodes", 1, "ensemble size: 1 or 3")
	cmd.Flags().BoolVar(&o.fsync, "fsync", true, "fsync the transaction log (--fsync=false is faster, for tests and demos)")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for data and logs (default: a temporary directory, removed on exit)")
	return cmd
}

func runClusterUp(ctx context.Context, out io.Writer, o clusterUpOptions) error {
	ens, err := startLocalEnsemble(ctx, ensemble.Options{Nodes: o.nodes, NoFsync: !o.fsync, Dir: o.dir}, os.Stderr)
	if err != nil {
		return err
	}
	defer ens.Stop()
	leader, _ := ens.Leader(context.WithoutCancel(ctx))
	fmt.Fprintf(out, "ZooKeeper ensemble up: %d member(s)\n", len(ens.Members()))
	for _, m := range ens.Members() {
		role := "follower"
		switch {
		case len(ens.Members()) == 1:
			role = "standalone"
		case m.ID == leader:
			role = "leader"
		}
		admin := m.AdminURL
		if admin == "" {
			admin = "(AdminServer off)"
		}
		fmt.Fprintf(out, "  member %d  %-21s %-10s pid %-7d admin %s\n", m.ID, m.ClientAddr, role, m.PID, admin)
	}
	fmt.Fprintf(out, "\nconnect string: %s\n\n", ens.ConnectString())
	fmt.Fprintf(out, "  zkherd cluster status --server %s\n  zkherd inspect --server %s\n\nPress Ctrl-C to stop and remove it.\n", ens.ConnectString(), ens.ConnectString())
	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping the ensemble...")
	if err := ens.Stop(); err != nil {
		return fmt.Errorf("stopping the ensemble: %w", err)
	}
	fmt.Fprintln(out, "stopped; nothing left behind.")
	return nil
}

// startLocalEnsemble starts ZooKeeper on loopback, turning a missing install
// into the one-line message with the fix.
func startLocalEnsemble(ctx context.Context, opts ensemble.Options, log io.Writer) (*ensemble.Ensemble, error) {
	if _, err := ensemble.Find(); err != nil {
		return nil, usageErr("%v", err)
	}
	fmt.Fprintf(log, "starting a local %d-node ZooKeeper ensemble on 127.0.0.1...\n", max(opts.Nodes, 1))
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	ens, err := ensemble.Start(sctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, usageErr("could not start a local ZooKeeper ensemble: %v", err)
	}
	return ens, nil
}

func newClusterStatusCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show each member's mode, zxid, connections, znodes, and which admin interfaces answer",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return notBuilt("zkherd cluster status") },
	}
}
