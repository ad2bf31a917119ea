package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
)

// buildReport turns the runs' results into the report.
func buildReport(plan *loadPlan, server string, local bool, results []*loadgen.Result, partial bool) *report.Run {
	rep := &report.Run{
		ZkherdVersion: Version(),
		Title:         plan.title,
		Partial:       partial,
		Server:        server,
		LocalEnsemble: local,
	}
	for _, res := range results {
		if rep.RunID == "" {
			rep.RunID = res.RunID
			rep.StartedAt = res.Start
		}
		sc := report.NewScenario(scenarioInfo(res), res.Metrics)
		sc.CheckThresholds(res.Run.Thresholds)
		rep.Scenarios = append(rep.Scenarios, sc)
	}
	return rep
}

// scenarioInfo is what the report needs from a loadgen result beyond its
// metrics.
func scenarioInfo(res *loadgen.Result) report.ScenarioInfo {
	info := report.ScenarioInfo{
		Name:        res.Run.Name,
		Recipe:      string(res.Run.Recipe),
		Clients:     res.Run.Clients,
		Partial:     res.Partial,
		WindowStart: res.WindowStart,
		WindowStop:  res.Stop,
		Ops:         res.Ops,
		TargetRate:  res.TargetRate,
		Herd:        report.Herd(res.Herd),
		Checks:      report.Checks(res.Checks),
		Requests:    res.Requests,
		QueueDepth:  res.QueueDepth,
		Notes:       res.Notes,
	}
	for _, e := range res.Events {
		info.Events = append(info.Events, report.TimedEvent{At: e.At, Kind: e.Kind, Detail: e.Detail})
	}
	info.Faults, info.Fencing = faultsInfo(res)
	return info
}

// failedChecks lists the scenarios whose checks failed, with their first
// violation.
func failedChecks(r *report.Run) []string {
	var out []string
	for _, s := range r.Scenarios {
		if !s.Checks.Passed {
			v := "failed"
			if len(s.Checks.Violations) > 0 {
				v = s.Checks.Violations[0]
			}
			out = append(out, fmt.Sprintf("%s: %s", s.Name, v))
		}
	}
	return out
}

func newReportCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Print or compare load reports",
		Long: `Print a load report's summary again, or compare two reports side by side
(before/after a change, herd/fair, two servers). A report is the report.json
that zkherd load --out DIR and zkherd demo write; a directory holding one
works too.`,
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:     "show DIR/report.json",
			Short:   "Print the summary of a load report",
			Example: "  zkherd report show ./run1/report.json",
			Args:    exactArgs(1, "a report.json (or the directory holding it)"),
			RunE: func(cmd *cobra.Command, args []string) error {
				r, err := readReport(args[0])
				if err != nil {
					return err
				}
				return report.WriteSummary(cmd.OutOrStdout(), r)
			},
		},
		&cobra.Command{
			Use:     "compare A/report.json B/report.json",
			Short:   "Print two load reports side by side, with the ratio of every figure",
			Example: "  zkherd report compare ./before/report.json ./after/report.json",
			Args:    exactArgs(2, "two report.json files (or directories holding them)"),
			RunE: func(cmd *cobra.Command, args []string) error {
				a, err := readReport(args[0])
				if err != nil {
					return err
				}
				b, err := readReport(args[1])
				if err != nil {
					return err
				}
				return report.Compare(cmd.OutOrStdout(), a, b)
			},
		},
	)
	return cmd
}

// exactArgs is cobra.ExactArgs with a message naming what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s: expected %s, got %d argument(s)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// readReport reads a report.json, or the one in a directory.
func readReport(path string) (*report.Run, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "report.json")
	}
	r, err := report.ReadJSON(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usageErr("%s: no such file (give the report.json that zkherd load --out wrote)", path)
		}
		return nil, usageErr("%v", err)
	}
	return r, nil
}
