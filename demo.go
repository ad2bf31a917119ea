package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/loadrun"
)

// demoScenario is the scenario zkherd demo runs.
const demoScenario = "herd-vs-fair"

type demoOptions struct {
	out   string
	noTUI bool
}

func newDemoCmd(g *globalOptions) *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start a local ensemble and run the herd-vs-fair scenario",
		Long: `Run the herd-vs-fair scenario: a thousand clients stampede one lock, first the
naive herd lock, then the fair lock, with the same hold time, on a local
1-node ZooKeeper started for the demo (or on --server). Prints the comparison
and writes a report (report.html, report.json, .hgrm and .hlog files) to
./zkherd-demo-<time>/ or --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := o.out
			if out == "" {
				out = "zkherd-demo-" + time.Now().Format("20060102-150405")
			}
			lo := &loadOptions{scenario: demoScenario, out: out, noTUI: o.noTUI}
			lo.timeoutSet = cmd.Flags().Changed("session-timeout")
			ov, err := lo.overrides(g)
			if err != nil {
				return err
			}
			plan, err := loadrun.NewPlan(demoScenario, ov, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "zkherd demo: %s with %d clients; report in %s\n",
				demoScenario, plan.Spec.Effective().Clients, filepath.Base(plan.Out))
			r, err := lo.runner(g, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return r.Run(cmd.Context(), plan)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "report directory (default ./zkherd-demo-<time>)")
	cmd.Flags().BoolVar(&o.noTUI, "no-tui", false, "print a progress line instead of the live dashboard")
	return cmd
}
