package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/scenarios"
)

func newScenariosCmd(g *globalOptions) *cobra.Command {
	var output, listOutput outputFormat
	cmd := &cobra.Command{
		Use:   "scenarios",
		Short: "List and explain the built-in load scenarios",
		Long: `List and explain the built-in load scenarios.

A scenario is a YAML file: which recipe, how many clients, how they arrive,
how long they hold, for how long, which faults and thresholds. Every field,
recipe, arrival model, distribution and fault kind is described in
` + scenarios.DocURL + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listScenarios(cmd.OutOrStdout(), output) },
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return listScenarios(cmd.OutOrStdout(), listOutput) },
	}
	output.register(cmd)
	listOutput.register(list)
	cmd.AddCommand(
		list,
		&cobra.Command{
			Use:   "show NAME|FILE",
			Short: "Print a scenario as YAML, explained in comments (a starting point for your own)",
			Long: `Print a scenario as YAML, what it does in comments: the output is a valid
scenario file.

  zkherd scenarios show fair-lock > my.yaml   # edit, then
  zkherd load --scenario my.yaml

Every field is described in ` + scenarios.DocURL + `.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return showScenario(cmd.OutOrStdout(), args[0])
			},
		},
	)
	return cmd
}

func listScenarios(w io.Writer, output outputFormat) error {
	if err := output.check(); err != nil {
		return err
	}
	if output == "json" {
		return writeJSON(w, scenarios.List())
	}
	scenarios.WriteList(w)
	return nil
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
