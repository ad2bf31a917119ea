package main

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/internal/credentials"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/pkgerr"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui"
)

// flagName is how the command line names an input a library's error
// names (exit.Inputf): the flag of the same name.
func flagName(input string) string { return "--" + input }

// globalOptions are the flags every command shares.
type globalOptions struct {
	server         string
	sessionTimeout time.Duration
	connectTimeout time.Duration
	auth           string // user:password, never printed or logged (resolved by load)
	authFile       string // --auth-file
	tlsFiles       connstr.TLS
	tlsCfg         *tls.Config // loaded from tlsFiles by load, before any command runs
}

func (g *globalOptions) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&g.server, "server", "", "ZooKeeper connect string host:port[,host:port...][/chroot] (default: start a local ensemble)")
	f.DurationVar(&g.sessionTimeout, "session-timeout", recipes.DefaultSessionTimeout, "ZooKeeper session timeout")
	f.DurationVar(&g.connectTimeout, "connect-timeout", tui.DefaultConnectTimeout, "how long inspect, export and import wait for a first session before giving up")
	f.StringVar(&g.auth, "auth", "", "digest credentials user:password (never printed; visible in ps: prefer --auth-file or $"+credentials.EnvVar+")")
	f.StringVar(&g.authFile, "auth-file", "", "read digest credentials user:password from this file (mode 0600 or 0400); $"+credentials.EnvVar+" is read when neither is given")
	f.StringVar(&g.tlsFiles.CA, "tls-ca", "", "connect over TLS, trusting the CA certificates in this PEM file (for servers with a secureClientPort)")
	f.StringVar(&g.tlsFiles.Cert, "tls-cert", "", "TLS client certificate (PEM), for servers that check clients (ssl.clientAuth=need)")
	f.StringVar(&g.tlsFiles.Key, "tls-key", "", "private key of --tls-cert (PEM)")
	f.StringVar(&g.tlsFiles.ServerName, "tls-server-name", "", "name the servers' certificates must carry (default: each host of --server)")
}

// load checks the shared flags that need files read: the TLS settings and
// the credentials (--auth, --auth-file, ZKHERD_AUTH). Every command runs it
// first (the root's PersistentPreRunE).
func (g *globalOptions) load() error {
	auth, err := credentials.Resolve(credentials.Source{Flag: g.auth, File: g.authFile, Env: os.Getenv})
	if err != nil {
		return exit.Named(exit.AsUsage(pkgerr.Reason(err)), flagName)
	}
	g.auth = auth
	cfg, err := g.tlsFiles.Config()
	if err != nil {
		return usageErr("--tls-*: %v", pkgerr.Reason(err))
	}
	g.tlsCfg = cfg
	return nil
}

// connectString parses --server; ok is false when none was given.
func (g *globalOptions) connectString() (cs connstr.ConnectString, ok bool, err error) {
	if g.server == "" {
		return connstr.ConnectString{}, false, nil
	}
	cs, err = connstr.Parse(g.server)
	if err != nil {
		return cs, true, usageErr("--server: %v", pkgerr.Reason(err))
	}
	return cs, true, nil
}

// reachable fails at once, in one line, when no server of cs accepts a
// connection (refused, or the TLS handshake failed), rather than after
// the session's --connect-timeout.
func (g *globalOptions) reachable(ctx context.Context, cs connstr.ConnectString) error {
	ctx, cancel := context.WithTimeout(ctx, g.connectTimeout)
	defer cancel()
	err := connstr.Reachable(ctx, cs.Servers, g.tlsCfg)
	if err == nil {
		return nil
	}
	return usageErr("%s", usermsg.Unreachable(cs.String(), err, g.tlsCfg != nil, ctx.Err() != nil))
}

// session opens a session to the --server ensemble for a command that
// needs one (export, import), failing in one line within --connect-timeout
// when none can be had.
func (g *globalOptions) session(ctx context.Context, command string) (*recipes.Session, connstr.ConnectString, error) {
	if err := g.checkAuth(); err != nil {
		return nil, connstr.ConnectString{}, err
	}
	cs, ok, err := g.connectString()
	if err != nil {
		return nil, cs, err
	}
	if !ok {
		return nil, cs, usageErr("%s needs --server host:port[,host:port...] (start one with: zkherd cluster up)", command)
	}
	if err := g.reachable(ctx, cs); err != nil {
		return nil, cs, err
	}
	sctx, cancel := context.WithTimeout(ctx, g.connectTimeout)
	defer cancel()
	s, err := recipes.NewSession(sctx, cs.Servers, g.sessionOptions()...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, cs, ctx.Err()
		}
		if errors.Is(err, recipes.ErrNoSession) {
			return nil, cs, g.connectErr(cs.String(), err)
		}
		return nil, cs, usageErr("%v", err)
	}
	return s, cs, nil
}

// connectErr is the one line for a first session that could not be
// opened within --connect-timeout.
func (g *globalOptions) connectErr(servers string, err error) error {
	return usageErr("%s", usermsg.ConnectFailed(servers, g.connectTimeout, err, g.tlsCfg != nil))
}

// checkAuth validates the credentials without ever echoing the password
// (load has resolved them; this catches a caller that skipped load).
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
	if g.tlsCfg != nil {
		opts = append(opts, recipes.WithTLS(g.tlsCfg))
	}
	return opts
}
