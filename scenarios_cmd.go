package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/scenarios"
)

func newScenariosCmd(g *globalOptions) *cobra.Command {
	list := func(cmd *cobra.Command, _ []string) error {
		scenarios.WriteList(cmd.OutOrStdout())
		return nil
	}
	cmd := newCommand("scenarios", "List and explain the built-in load scenarios", "scenarios", cobra.NoArgs, list)
	cmd.AddCommand(
		&cobra.Command{Use: "list", Short: "List the built-in scenarios", Args: cobra.NoArgs, RunE: list},
		newCommand("show NAME|FILE", "Print a scenario as YAML, explained in comments (a starting point for your own)", "scenarios-show", cobra.ExactArgs(1),
			func(cmd *cobra.Command, args []string) error { return showScenario(cmd.OutOrStdout(), args[0]) }),
	)
	return cmd
}

// showScenario prints a scenario as a YAML file that zkherd load
// accepts as it is: what it does, in comments, then its fields.
func showScenario(w io.Writer, name string) error {
	spec, err := scenarios.Lookup(name)
	if err != nil {
		return loadrun.ScenarioError(err)
	}
	src, ok := scenarios.BuiltinSource(name)
	if !ok {
		if src, err = os.ReadFile(name); err != nil {
			return usageErr("%s: %v", name, err)
		}
	}
	scenarios.Explain(w, name, spec, src)
	return nil
}
