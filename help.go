package main

import (
	"embed"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/exit"
)

// The long help and examples of the commands are prose, kept as text in
// help/NAME.txt (NAME.example.txt for examples) so that they read and are
// reviewed as documentation, apart from the code that wires flags.
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is help/NAME.txt without its final newline. A missing file is a
// build mistake, caught by every test that builds the command tree.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("zkherd: no help/" + name + ".txt")
	}
	return strings.TrimSuffix(string(b), "\n")
}

// newCommand is a command whose long help is help/NAME.txt and whose
// examples, if any, help/NAME.example.txt.
func newCommand(use, short, name string, args cobra.PositionalArgs, run func(*cobra.Command, []string) error) *cobra.Command {
	example, _ := helpFiles.ReadFile("help/" + name + ".example.txt")
	// A library's error names the values at fault; the command names
	// them as the flags that gave them.
	runE := func(cmd *cobra.Command, args []string) error { return exit.Named(run(cmd, args), flagName) }
	return &cobra.Command{Use: use, Short: short, Long: help(name), Example: strings.TrimSuffix(string(example), "\n"), Args: args, RunE: runE}
}

// newGroup is a command that only holds subs.
func newGroup(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long}
	cmd.AddCommand(subs...)
	return cmd
}
