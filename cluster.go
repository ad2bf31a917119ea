package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/cluster"
	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/output"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/loadrun"
)

func newClusterCmd(g *globalOptions) *cobra.Command {
	subs := []*cobra.Command{newClusterUpCmd(g), newClusterStatusCmd(g)}
	for _, op := range []string{cluster.OpKill, cluster.OpPause, cluster.OpResume, cluster.OpRestart} {
		subs = append(subs, newClusterMemberCmd(g, op))
	}
	return newGroup("cluster", "Start a local ZooKeeper ensemble, act on its members, or show the status of any ensemble", "", subs...)
}

// registerOutput adds the -o flag of status-like commands to cmd, checked
// before cmd runs.
func registerOutput(cmd *cobra.Command, f *output.Format) {
	cmd.Flags().StringVarP((*string)(f), "output", "o", "text", "output format: text or json")
	cmd.PreRunE = func(*cobra.Command, []string) error { return exit.Named(f.Check(), flagName) }
}

// clusterHeapMB is each member's JVM heap for user-facing ensembles: room
// for thousands of sessions and their watches (tests use less).
const clusterHeapMB = 1024

type clusterUpOptions struct {
	nodes  int
	fsync  bool
	dir    string
	port   int
	tls    bool
	output output.Format
}

func newClusterUpCmd(g *globalOptions) *cobra.Command {
	o := clusterUpOptions{}
	cmd := newCommand("up", "Start a local 1-, 3-, 5- or 7-node ensemble on 127.0.0.1 and keep it until Ctrl-C", "cluster-up", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if !ensemble.ValidNodes(o.nodes) {
			return usageErr("--nodes %d: choose 1, 3, 5 or 7", o.nodes)
		}
		if o.port < 0 || o.port > 65535-o.nodes+1 {
			return usageErr("--port %d: choose a port from 1 to %d, or leave it out", o.port, 65535-o.nodes+1)
		}
		return runClusterUp(cmd.Context(), cmd.OutOrStdout(), o)
	})
	cmd.Flags().IntVar(&o.nodes, "nodes", 1, "ensemble size: 1, 3, 5 or 7")
	cmd.Flags().BoolVar(&o.fsync, "fsync", true, "fsync the transaction log (--fsync=false is faster, for tests and demos)")
	cmd.Flags().IntVar(&o.port, "port", 0, "client port of member 1 (member i uses port+i-1; default: free ports)")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for data and logs (default: a temporary directory, removed on exit; a directory you name is kept)")
	cmd.Flags().BoolVar(&o.tls, "tls", false, "accept clients only over TLS, with certificates zkherd makes (printed on start)")
	registerOutput(cmd, &o.output)
	return cmd
}

func runClusterUp(ctx context.Context, out io.Writer, o clusterUpOptions) error {
	cluster.RemoveStaleRecords() // records of "cluster up" processes that died
	ens, err := loadrun.StartEnsemble(ctx, ensemble.Options{Nodes: o.nodes, NoFsync: !o.fsync, Dir: o.dir, HeapMB: clusterHeapMB, ClientPort: o.port, TLS: o.tls}, os.Stderr)
	if err != nil {
		return err
	}
	defer ens.Stop()
	describe := func(info cluster.Info) error {
		if t := info.TLS; t != nil {
			info.Flags = fmt.Sprintf("--tls-ca %s --tls-cert %s --tls-key %s", t.CA, t.Cert, t.Key)
		}
		return o.output.Write(out, info, func(w io.Writer) error { writeClusterUp(w, info); return nil })
	}
	return cluster.Up(ctx, ens, cluster.UpOptions{Print: describe, Log: os.Stderr})
}

// writeClusterUp writes info for a person: the members, the connect
// string and the commands that use it.
func writeClusterUp(out io.Writer, info cluster.Info) {
	fmt.Fprintf(out, "ZooKeeper ensemble up: %d member(s)", len(info.Members))
	if info.TLS != nil {
		fmt.Fprint(out, ", TLS only (client certificates required)")
	}
	fmt.Fprintln(out)
	for _, m := range info.Members {
		admin := m.AdminURL
		if admin == "" {
			admin = "(AdminServer off)"
		}
		fmt.Fprintf(out, "  member %d  %-21s %-10s pid %-7d admin %s\n", m.ID, m.Address, m.Role, m.PID, admin)
	}
	fmt.Fprintf(out, "\nconnect string: %s\n", info.ConnectString)
	conn := "--server " + info.ConnectString
	if info.TLS != nil {
		fmt.Fprintf(out, "TLS: CA %s\n     client certificate %s, key %s\n", info.TLS.CA, info.TLS.Cert, info.TLS.Key)
		conn += " " + info.Flags
	}
	fmt.Fprintf(out, "\n  zkherd cluster status %s\n  zkherd inspect %s\n  zkherd cluster kill|pause|resume|restart MEMBER\n\nPress Ctrl-C to stop and remove it.\n", conn, conn)
}

type clusterStatusOptions struct {
	adminURLs []string
	timeout   time.Duration
	output    output.Format
}

func newClusterStatusCmd(g *globalOptions) *cobra.Command {
	o := clusterStatusOptions{}
	cmd := newCommand("status", "Show each member's mode, zxid, connections, znodes, and which admin interfaces answer", "cluster-status", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		cs, ok, err := g.connectString()
		if err != nil {
			return err
		}
		tlsCfg := g.tlsCfg
		if !ok {
			// The one running "cluster up" of this user, with its certificates.
			rec, err := cluster.Find(nil)
			if err != nil {
				return usageErr("cluster status needs --server host:port[,host:port...] (no single running \"zkherd cluster up\" to default to: %v)", err)
			}
			cs.Servers = strings.Split(rec.ConnectString(), ",")
			if tlsCfg == nil {
				if tlsCfg, err = rec.TLSConfig(); err != nil {
					return usageErr("the certificates of the running cluster up: %v", err)
				}
			}
		}
		if len(o.adminURLs) > 0 && len(o.adminURLs) != len(cs.Servers) {
			return usageErr("--admin-url: %d given for %d servers; give one per server, in --server order", len(o.adminURLs), len(cs.Servers))
		}
		st := cluster.Poll(cmd.Context(), cluster.Members(cs.Servers, o.adminURLs, tlsCfg), o.timeout)
		if err := cmd.Context().Err(); err != nil {
			return err
		}
		if err := o.output.Write(cmd.OutOrStdout(), st, st.WriteText); err != nil {
			return err
		}
		switch {
		case st.Up == 0:
			reason := st.Members[0].Error
			return usageErr("no member of %s answered: %s (%s; start one with: zkherd cluster up)", cs.String(), reason, usermsg.ConnectFix(reason, tlsCfg != nil))
		case !st.Healthy:
			return &exitError{Code: exitCheckFailed, Err: errors.New(st.Problem)}
		}
		return nil
	})
	cmd.Flags().StringSliceVar(&o.adminURLs, "admin-url", nil, "AdminServer base URL per server, e.g. http://127.0.0.1:8080")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 3*time.Second, "how long to wait for each member")
	registerOutput(cmd, &o.output)
	return cmd
}

type clusterMemberOptions struct {
	timeout time.Duration
	output  output.Format
}

func newClusterMemberCmd(g *globalOptions, op string) *cobra.Command {
	o := clusterMemberOptions{}
	what := map[string]string{
		cluster.OpKill:    "Kill a member of a running \"cluster up\" with SIGKILL, as a crash would",
		cluster.OpPause:   "Freeze a member of a running \"cluster up\" (SIGSTOP), as a long GC pause would",
		cluster.OpResume:  "Resume a paused member of a running \"cluster up\"",
		cluster.OpRestart: "Restart a member of a running \"cluster up\" (stopped or not) on its ports and data",
	}[op]
	cmd := &cobra.Command{
		Use:     op + " MEMBER",
		Short:   what,
		Long:    what + ".\n\n" + help("cluster-member"),
		Example: fmt.Sprintf("  zkherd cluster %s 2\n  zkherd cluster %s 127.0.0.1:2182 --server 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183", op, op),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, _, err := g.connectString()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			r, err := cluster.Act(ctx, cs.Servers, op, args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			return o.output.Write(cmd.OutOrStdout(), r, r.WriteText)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the member (a restart waits until it serves)")
	registerOutput(cmd, &o.output)
	return cmd
}
