package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/report"
)

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
