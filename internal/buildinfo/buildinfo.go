// Package buildinfo says which zkherd this is: its version, with the VCS
// revision when built from git, and the Go and platform it was built with.
// Reports carry the version, so it lives outside the command line.
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with
// -ldflags "-X github.com/zkherd/zkherd/internal/buildinfo.version=...".
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

// Info is what `zkherd version -o json` prints.
type Info struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Read returns this binary's Info.
func Read() Info {
	return Info{Version(), runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH}
}

// WriteText writes "zkherd VERSION", for a person.
func (i Info) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "zkherd %s\n", i.Version)
	return err
}
