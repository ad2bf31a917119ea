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
	out      string
	noTUI    bool
	clients  int
	duration time.Duration
}

func newDemoCmd(g *globalOptions) *cobra.Command {
	o := &demoOptions{}
	cmd := newCommand("demo", "Start a local ensemble and run the herd-vs-fair scenario", "demo", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		out := o.out
		if out == "" {
			out = "zkherd-demo-" + time.Now().Format("20060102-150405")
		}
		lo := &loadOptions{noTUI: o.noTUI, req: loadrun.Request{
			Scenario: demoScenario, Out: out, Clients: o.clients, Duration: o.duration,
			ClientsGiven: cmd.Flags().Changed("clients"), DurationGiven: cmd.Flags().Changed("duration"),
			SessionTimeout: g.sessionTimeout, SessionTimeoutGiven: cmd.Flags().Changed("session-timeout"),
		}}
		job, err := loadrun.Prepare(&lo.req)
		if err != nil {
			return err
		}
		r, err := lo.runner(g, cmd.OutOrStdout(), cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		plan := job.Plan()
		fmt.Fprintf(cmd.ErrOrStderr(), "zkherd demo: %s with %d clients; report in %s\n",
			demoScenario, plan.Spec.Effective().Clients, filepath.Base(plan.Out))
		return lo.do(cmd.Context(), g, r, job, true, cmd.OutOrStdout(), cmd.ErrOrStderr())
	})
	cmd.Flags().StringVar(&o.out, "out", "", "report directory (default ./zkherd-demo-<time>)")
	cmd.Flags().BoolVar(&o.noTUI, "no-tui", false, "print a progress line instead of the live dashboard")
	cmd.Flags().IntVar(&o.clients, "clients", 0, "clients of each of the two runs (default 1000; fewer for a small machine)")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "length of each of the two runs (default 15s)")
	return cmd
}
