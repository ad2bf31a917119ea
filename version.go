package main

import (
	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/buildinfo"
	"github.com/zkherd/zkherd/internal/output"
)

func newVersionCmd() *cobra.Command {
	var out output.Format
	cmd := &cobra.Command{Use: "version", Short: "Print the zkherd version", Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		v := buildinfo.Read()
		return out.Write(cmd.OutOrStdout(), v, v.WriteText)
	}}
	registerOutput(cmd, &out)
	return cmd
}
