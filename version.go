package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Version is the zkherd version, with the VCS revision when built from git.
func Version() string {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return v
}

// versionInfo is what "version -o json" prints.
type versionInfo struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func newVersionCmd() *cobra.Command {
	var output outputFormat
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the zkherd version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), versionInfo{Version(), runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH})
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "zkherd %s\n", Version())
			return err
		},
	}
	output.register(cmd)
	return cmd
}
