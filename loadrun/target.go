package loadrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
)

// Target is where load runs go: the servers of --server, or a local
// ensemble that Open starts.
type Target struct {
	// Server is the connect string the user gave, parsed; no Servers means
	// a local ensemble.
	Server connstr.ConnectString
	// SessionOptions are applied to every session (timeout, digest auth).
	SessionOptions []recipes.SessionOption
	// TLS reaches the servers over TLS (connstr.TLS.Config): the mntr reads
	// (sessions get it through SessionOptions, recipes.WithTLS).
	TLS *tls.Config
	// SourceAddrs is loadgen.Options.SourceAddrs (--source-addrs).
	SourceAddrs int
	// ServerConfig configures a local ensemble's servers (--server-config);
	// servers given in Server keep their own.
	ServerConfig ensemble.ServerConfig
	// Log receives what Open says while it starts an ensemble (stderr).
	Log io.Writer
	// Name names a value the user gave in the advice the run prints,
	// writes into reports and returns in errors: the command's flag for
	// it (package main: "--duration"); nil names it bare. Libraries
	// never name flags (exit.Advice).
	Name func(input string) string
}

// Env is an open target: the servers every run of a plan uses.
type Env struct {
	// Server is the connect string runs use, for the report.
	Server connstr.ConnectString
	// Local is set when Open started the ensemble.
	Local bool
	ens   *ensemble.Ensemble
	// quorum holds the proxies on the local ensemble's quorum links, when
	// a run lags a member (lag-member).
	quorum *faults.Quorum
	t      Target
}

// Open gets the target ready for plan, whose runs open up to clients
// sessions each, processes times over: without servers it starts a local
// ensemble of the scenario's size, sized for the sessions; with servers it
// checks that the scenario's faults fit them. Close the Env when done.
func (t Target) Open(ctx context.Context, plan *Plan, clients int) (*Env, error) {
	e := &Env{Server: t.Server, t: t}
	if len(t.Server.Servers) > 0 {
		if t.ServerConfig != (ensemble.ServerConfig{}) {
			return nil, exit.Inputf("{server-config} configures the local ensemble zkherd starts; servers given with {server} keep their own configuration (leave out one or the other)")
		}
		for _, run := range plan.Runs {
			if err := run.Spec.ValidateEnsemble(len(t.Server.Servers), false); err != nil {
				return nil, ScenarioError(err)
			}
		}
		// Refused, or the TLS handshake failed: say so now, not after the
		// sessions' timeout.
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := connstr.Reachable(rctx, t.Server.Servers, t.TLS); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, exit.Usagef("%s", usermsg.Unreachable(t.Server.String(), err, t.TLS != nil, rctx.Err() != nil))
		}
		if err := e.checkChroot(ctx); err != nil {
			return nil, err
		}
		return e, nil
	}
	opts := ensemble.Options{
		Nodes:        plan.Spec.Effective().Ensemble,
		NoFsync:      true,
		HeapMB:       heapFor(clients),
		ServerConfig: t.ServerConfig,
	}
	if m := plan.Spec.ServerMaxSessionTimeout; m > 0 && opts.ServerConfig.MaxSessionTimeout == 0 {
		// The scenario's; --server-config max-session-timeout wins.
		opts.ServerConfig.MaxSessionTimeout = m
	}
	if plan.lagsMembers() {
		// lag-member acts through proxies on the quorum links.
		e.quorum = faults.NewQuorum(context.WithoutCancel(ctx))
		opts.PeerAddr = e.quorum.PeerAddr
	}
	ens, err := StartEnsemble(ctx, opts, t.Log)
	if err != nil {
		if e.quorum != nil {
			e.quorum.Close()
		}
		return nil, err
	}
	e.ens, e.Local = ens, true
	e.Server = connstr.ConnectString{Servers: ens.Servers()}
	return e, nil
}

// Close stops the local ensemble, if Open started one.
func (e *Env) Close() error {
	if e.ens == nil {
		return nil
	}
	err := e.ens.Stop()
	if e.quorum != nil {
		err = errors.Join(err, e.quorum.Close())
	}
	return err
}

// Label names the servers for the report: the connect string, and a local
// ensemble's server configuration when it is not the default.
func (e *Env) Label() string {
	if !e.Local || e.t.ServerConfig == (ensemble.ServerConfig{}) {
		return e.Server.String()
	}
	return fmt.Sprintf("%s [%s]", e.Server.String(), e.t.ServerConfig)
}

// Where is where the runs go, for a Display: the connect string and TLS
// settings to reach the servers, and the label to show.
func (e *Env) Where() Where { return Where{Server: e.Server, TLS: e.t.TLS, Label: e.Label()} }

// LoadOptions are the options of every loadgen.Run on the target; the
// scenario's server faults act on the local ensemble, if any.
func (e *Env) LoadOptions() loadgen.Options {
	o := loadgen.Options{
		Servers:        e.Server.Servers,
		Chroot:         e.Server.Chroot,
		SessionOptions: e.t.SessionOptions,
		TLS:            e.t.TLS,
		SourceAddrs:    e.t.SourceAddrs,
		Name:           e.t.Name,
	}
	if e.ens != nil {
		o.Ensemble = e.ens
		o.Quorum = e.quorum
	}
	return o
}

// session opens the session a process coordinates a distributed run
// through, with the target's session options and extra.
func (e *Env) session(ctx context.Context, extra ...recipes.SessionOption) (*recipes.Session, error) {
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	s, err := recipes.NewSession(sctx, e.Server.Servers, append(slices.Clone(e.t.SessionOptions), extra...)...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// recipes names the servers and the cause after its own name.
		if cause := errors.Unwrap(err); cause != nil {
			return nil, exit.Usagef("connect %s: %w", e.Server.String(), cause)
		}
		return nil, exit.AsUsage(err)
	}
	return s, nil
}

// checkChroot refuses a chroot that does not exist on the servers: a run
// would otherwise create it (its namespace's parents) and leave it at the
// servers' root, outside anything the user meant to touch.
func (e *Env) checkChroot(ctx context.Context) error {
	chroot := e.Server.Chroot
	if chroot == "" {
		return nil
	}
	s, err := e.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	ok, _, err := s.Conn().Exists(chroot)
	if err != nil {
		return exit.Inputf("could not check the chroot %s on %s: %v (check {server} and {auth})", chroot, e.Server.String(), err)
	}
	if !ok {
		return exit.Inputf("the chroot %s in {server} does not exist on %s: create it first, or correct the path after the last address", chroot, strings.Join(e.Server.Servers, ","))
	}
	return nil
}

// heapFor sizes the local ensemble's JVM heap for the sessions a run opens.
func heapFor(clients int) int {
	return min(256+clients/8, 2048)
}

// StartEnsemble starts ZooKeeper on loopback, turning a missing install
// into the one-line message with the fix. zkherd cluster up and zkherd
// inspect start theirs with it too.
func StartEnsemble(ctx context.Context, opts ensemble.Options, log io.Writer) (*ensemble.Ensemble, error) {
	if _, err := ensemble.Find(); err != nil {
		return nil, exit.AsUsage(err)
	}
	// Directories left by a zkherd that was killed (SIGKILL, a crash)
	// before it could clean up.
	if removed, _ := ensemble.RemoveStale(); len(removed) > 0 {
		fmt.Fprintf(log, "removed %d temporary ensemble director(ies) left by zkherd processes that died\n", len(removed))
	}
	fmt.Fprintf(log, "starting a local %d-node ZooKeeper ensemble on 127.0.0.1...\n", max(opts.Nodes, 1))
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	ens, err := ensemble.Start(sctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Start's error is the cause, then the member's log tail: the user
		// gets the cause in one line; the log stays in the ensemble's files.
		first := err.Error()
		if se := (*ensemble.StartError)(nil); errors.As(err, &se) {
			first = strings.Replace(first, se.Error(), se.Cause(), 1)
		}
		if errors.Is(err, ensemble.ErrPortInUse) {
			return nil, exit.Usagef("%s", first)
		}
		return nil, exit.Usagef("could not start a local ZooKeeper ensemble: %s", first)
	}
	return ens, nil
}
