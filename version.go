package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/output"
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
	var out output.Format
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the zkherd version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.Check(); err != nil {
				return err
			}
			v := versionInfo{Version(), runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH}
			return out.Write(cmd.OutOrStdout(), v, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "zkherd %s\n", v.Version)
				return err
			})
		},
	}
	registerOutput(cmd, &out)
	return cmd
}
