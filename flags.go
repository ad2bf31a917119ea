package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/recipes"
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	server         string
	sessionTimeout time.Duration
	auth           string // user:password, never printed or logged
}

func (g *globalOptions) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&g.server, "server", "", "ZooKeeper connect string host:port[,host:port...][/chroot] (default: start a local ensemble)")
	f.DurationVar(&g.sessionTimeout, "session-timeout", recipes.DefaultSessionTimeout, "ZooKeeper session timeout")
	f.StringVar(&g.auth, "auth", "", "digest credentials user:password (never printed)")
}

// connectString parses --server; ok is false when none was given.
func (g *globalOptions) connectString() (cs connstr.ConnectString, ok bool, err error) {
	if g.server == "" {
		return connstr.ConnectString{}, false, nil
	}
	cs, err = connstr.Parse(g.server)
	if err != nil {
		return cs, true, usageErr("--server: %v", err)
	}
	return cs, true, nil
}

// checkAuth validates --auth without ever echoing the password.
func (g *globalOptions) checkAuth() error {
	if g.auth == "" {
		return nil
	}
	user, pass, found := strings.Cut(g.auth, ":")
	if !found || user == "" || pass == "" {
		return usageErr("--auth: expected user:password (digest scheme)")
	}
	return nil
}

// sessionOptions turns the shared flags into recipe session options.
func (g *globalOptions) sessionOptions() []recipes.SessionOption {
	opts := []recipes.SessionOption{recipes.WithSessionTimeout(g.sessionTimeout)}
	if g.auth != "" {
		opts = append(opts, recipes.WithDigestAuth(g.auth))
	}
	return opts
}

func validateSessionTimeout(d time.Duration) error {
	if d < time.Second || d > 10*time.Minute {
		return usageErr("--session-timeout %v: choose between 1s and 10m (servers clamp to their min/max session timeout)", d)
	}
	return nil
}

var _ = fmt.Sprintf
