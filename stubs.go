package main

import "github.com/spf13/cobra"

// Commands whose implementation lands with later work: each answers plainly
// that it is not built yet and exits 2.

func newDemoCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Start a local ensemble and run the herd-vs-fair scenario",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return notBuilt("zkherd demo") },
	}
}

func newLoadCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "load",
		Short: "Run a load scenario with many contending ZooKeeper sessions",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return notBuilt("zkherd load") },
	}
}

func newReportCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "report",
		Short: "Print or compare load reports",
		RunE:  func(*cobra.Command, []string) error { return notBuilt("zkherd report") },
	}
}

func newScenariosCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "scenarios",
		Short: "List and explain the built-in load scenarios",
		RunE:  func(*cobra.Command, []string) error { return notBuilt("zkherd scenarios") },
	}
}
