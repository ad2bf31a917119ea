package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/output"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/report"
)

func newReportCmd(g *globalOptions) *cobra.Command {
	var out output.Format
	show := &cobra.Command{
		Use:     "show DIR/report.json",
		Short:   "Print the summary of a load report",
		Example: "  zkherd report show ./run1/report.json\n  zkherd report show ./run1 -o json",
		Args:    exactArgs(1, "a report.json (or the directory holding it)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := readReport(args[0])
			if err != nil {
				return err
			}
			if out == output.JSON {
				return report.WriteJSON(cmd.OutOrStdout(), r) // report.json's own encoding
			}
			width := report.Width
			if !loadrun.IsTerminal(cmd.OutOrStdout()) {
				width = 0 // no wrapping into files and pipes
			}
			return report.WriteSummaryWidth(cmd.OutOrStdout(), r, width)
		},
	}
	registerOutput(show, &out)
	return newGroup("report", "Print, compare or check load reports", help("report"), show, newReportCompareCmd(), newReportCheckCmd())
}

func newReportCheckCmd() *cobra.Command {
	return newCommand("check DIR", "Check a run's history.jsonl again for linearizability", "report-check", exactArgs(1, "a report directory (or its report.json)"), func(cmd *cobra.Command, args []string) error {
		r, err := readReport(args[0])
		if err != nil {
			return err
		}
		dir := args[0]
		if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			dir = filepath.Dir(dir)
		}
		results, err := report.Recheck(cmd.Context(), dir, r)
		if err != nil {
			return usageErr("%s: %v; give a directory that zkherd load --out wrote", dir, err)
		}
		failed := 0
		for i, l := range results {
			if l == nil {
				continue
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: linearizability: %s\n", r.Scenarios[i].Name, l.Line())
			if l.Result != oracle.ResultOK {
				failed++
			}
		}
		if failed > 0 {
			return &exitError{Code: exitCheckFailed, Err: fmt.Errorf("%d of the histories are not linearizable or could not be checked to the end", failed)}
		}
		return nil
	})
}

func newReportCompareCmd() *cobra.Command {
	var failIfWorse string
	var format output.Format
	cmd := newCommand("compare A/report.json B/report.json", "Print two load reports side by side, with the ratio of every figure", "report-compare", exactArgs(2, "two report.json files (or directories holding them)"), func(cmd *cobra.Command, args []string) error {
		tolerance := -1.0
		if failIfWorse != "" {
			t, err := report.ParseTolerance(failIfWorse)
			if err != nil {
				return usageErr("--fail-if-worse %s: give a percentage such as 10%%", failIfWorse)
			}
			tolerance = t
		}
		a, err := readReport(args[0])
		if err != nil {
			return err
		}
		b, err := readReport(args[1])
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if format == output.JSON {
			c := report.Compared(a, b, tolerance)
			if err := format.Write(out, c, nil); err != nil {
				return err
			}
			if why := c.Incomparable; len(why) > 0 {
				return incomparable(why)
			}
			if regs := c.Regressions; len(regs) > 0 {
				return &exitError{Code: exitCheckFailed, Err: fmt.Errorf("%d regression(s) beyond %s: %s", len(regs), failIfWorse, regs[0])}
			}
			return nil
		}
		if err := report.Compare(out, a, b); err != nil {
			return err
		}
		if tolerance < 0 {
			return nil
		}
		if why := report.Incomparable(a, b); len(why) > 0 {
			fmt.Fprintf(out, "\nNOT COMPARABLE: --fail-if-worse cannot judge B against A:\n")
			for _, w := range why {
				fmt.Fprintf(out, "  %s\n", w)
			}
			return incomparable(why)
		}
		regs := report.Regressions(a, b, tolerance)
		if len(regs) == 0 {
			fmt.Fprintf(out, "\nno main figure of B is more than %s%% worse than A\n", strings.TrimSuffix(strings.TrimSpace(failIfWorse), "%"))
			return nil
		}
		fmt.Fprintf(out, "\nREGRESSION: %d figure(s) more than %s%% worse in B:\n", len(regs), strings.TrimSuffix(strings.TrimSpace(failIfWorse), "%"))
		for _, r := range regs {
			fmt.Fprintf(out, "  %s\n", r)
		}
		return &exitError{Code: exitCheckFailed, Err: fmt.Errorf("%d regression(s) beyond %s: %s", len(regs), failIfWorse, regs[0])}
	})
	cmd.Flags().StringVar(&failIfWorse, "fail-if-worse", "", "exit 1 when a main figure of B is more than this much worse than A, such as 10%")
	registerOutput(cmd, &format)
	return cmd
}

// incomparable fails a --fail-if-worse gate whose runs measure different
// things (or stopped early): a baseline of another recipe, arrival model
// or client count, or a partial run, cannot vouch for B.
func incomparable(why []string) error {
	return &exitError{Code: exitCheckFailed, Err: fmt.Errorf("--fail-if-worse: the runs are not comparable (%s); compare runs of the same scenario, arrival and --clients, each run to its end", why[0])}
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
