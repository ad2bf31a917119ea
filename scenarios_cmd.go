package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/output"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/scenarios"
)

func newScenariosCmd(g *globalOptions) *cobra.Command {
	var out, listOut output.Format
	lister := func(f *output.Format) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			return f.Write(cmd.OutOrStdout(), scenarios.List(), func(w io.Writer) error {
				scenarios.WriteList(w, flagName)
				return nil
			})
		}
	}
	cmd := newCommand("scenarios", "List and explain the built-in load scenarios", "scenarios", cobra.NoArgs, lister(&out))
	list := &cobra.Command{Use: "list", Short: "List the built-in scenarios", Args: cobra.NoArgs, RunE: lister(&listOut)}
	registerOutput(cmd, &out)
	registerOutput(list, &listOut)
	cmd.AddCommand(
		list,
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
	scenarios.Explain(w, name, spec, src, flagName)
	return nil
}
