package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/scenarios"
)

func newScenariosCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenarios",
		Short: "List and explain the built-in load scenarios",
		Long: `List and explain the built-in load scenarios.

A scenario is a YAML file: which recipe, how many clients, how they arrive,
how long they hold, for how long, which faults and thresholds. Every field,
recipe, arrival model, distribution and fault kind is described in
` + scenarios.DocURL + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			listScenarios(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "List the built-in scenarios",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				listScenarios(cmd.OutOrStdout())
				return nil
			},
		},
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

func listScenarios(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRECIPE\tCLIENTS\tLENGTH\tARRIVAL\tSUMMARY")
	for _, s := range scenarios.Builtins() {
		e := s.Effective()
		recipe := string(e.Recipe)
		if len(e.Compare) > 0 {
			var names []string
			for _, st := range e.Compare {
				names = append(names, string(st.Recipe))
			}
			recipe = strings.Join(names, " vs ")
		}
		length := e.Duration.String()
		if e.Ops > 0 {
			length = fmt.Sprintf("%d ops", e.Ops)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", e.Name, recipe, e.Clients, length, e.Arrival.Kind, firstSentence(e.Description))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nzkherd scenarios show NAME explains one and prints its YAML; zkherd load --scenario NAME|FILE runs it.")
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
	e := spec.Effective()
	comment := func(s string) {
		for _, line := range strings.Split(s, "\n") {
			fmt.Fprintln(w, strings.TrimRight("# "+line, " "))
		}
	}
	// The description is in the YAML itself; the comments add what the
	// defaults make of it.
	comment("Scenario " + e.Name + ", every default applied:")
	for _, run := range spec.Runs() {
		comment(strings.ReplaceAll(wrap(fmt.Sprintf("%s: %s, %d clients, %s, %s arrivals, hold %v, ramp-up %.0f sessions/s.",
			run.Name, run.Recipe, run.Clients, lengthOf(run), run.Arrival.Kind, run.Hold, run.RampUp), 72), "\n", "\n    "))
	}
	comment("")
	comment(fmt.Sprintf("zkherd scenarios show %s > my.yaml, edit it, then", name))
	comment("zkherd load --scenario my.yaml. Every field is described in")
	comment(scenarios.DocURL)
	fmt.Fprintln(w)
	w.Write(src)
	return nil
}

func lengthOf(r scenarios.Run) string {
	if r.Ops > 0 {
		return fmt.Sprintf("%d operations", r.Ops)
	}
	return r.Duration.String()
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return s
}

func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(s) {
		if n > 0 && n+1+len(word) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
