package main

import "github.com/spf13/cobra"

func newInspectCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect",
		Short: "Live terminal view of an ensemble: tree, locks, queues, sessions, servers",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return notBuilt("zkherd inspect") },
	}
}
