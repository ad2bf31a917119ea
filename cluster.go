package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/cluster"
	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/loadrun"
)

func newClusterCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start a local ZooKeeper ensemble, act on its members, or show the status of any ensemble",
	}
	cmd.AddCommand(newClusterUpCmd(g), newClusterStatusCmd(g))
	for _, op := range []string{cluster.OpKill, cluster.OpPause, cluster.OpResume, cluster.OpRestart} {
		cmd.AddCommand(newClusterMemberCmd(g, op))
	}
	return cmd
}

// outputFormat is the -o flag of status-like commands: text or json.
type outputFormat string

func (f *outputFormat) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP((*string)(f), "output", "o", "text", "output format: text or json")
}

func (f outputFormat) check() error {
	if f != "text" && f != "json" {
		return usageErr("--output %q: choose text or json", string(f))
	}
	return nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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
	output outputFormat
}

func newClusterUpCmd(g *globalOptions) *cobra.Command {
	o := clusterUpOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local 1-, 3-, 5- or 7-node ensemble on 127.0.0.1 and keep it until Ctrl-C",
		Long: `Starts a local ZooKeeper ensemble on 127.0.0.1 and keeps it until Ctrl-C,
reporting live when a member dies or the leader changes. Other terminals can
act on its members (zkherd cluster kill|pause|resume|restart MEMBER) and
read its status (zkherd cluster status).

With --tls the members accept clients only over TLS (ZooKeeper's
secureClientPort, no plain port) and check client certificates; zkherd makes
a CA, the servers' and a client certificate in the ensemble's directory
(removed with it) and prints the flags that connect.`,
		Example: `  zkherd cluster up --nodes 3
  zkherd cluster up --tls
  zkherd cluster status --server <printed connect string>`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !ensemble.ValidNodes(o.nodes) {
				return usageErr("--nodes %d: choose 1, 3, 5 or 7", o.nodes)
			}
			if o.port < 0 || o.port > 65535-o.nodes+1 {
				return usageErr("--port %d: choose a port from 1 to %d, or leave it out", o.port, 65535-o.nodes+1)
			}
			if err := o.output.check(); err != nil {
				return err
			}
			return runClusterUp(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().IntVar(&o.nodes, "nodes", 1, "ensemble size: 1, 3, 5 or 7")
	cmd.Flags().BoolVar(&o.fsync, "fsync", true, "fsync the transaction log (--fsync=false is faster, for tests and demos)")
	cmd.Flags().IntVar(&o.port, "port", 0, "client port of member 1 (member i uses port+i-1; default: free ports)")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for data and logs (default: a temporary directory, removed on exit; a directory you name is kept)")
	cmd.Flags().BoolVar(&o.tls, "tls", false, "accept clients only over TLS, with certificates zkherd makes (printed on start)")
	o.output.register(cmd)
	return cmd
}

// upInfo is what "cluster up" prints once the ensemble serves; its JSON
// form is what -o json prints.
type upInfo struct {
	ConnectString string             `json:"connect_string"`
	Members       []upMember         `json:"members"`
	TLS           *ensemble.TLSFiles `json:"tls,omitempty"`
	// Flags are the global flags that connect to it (TLS files).
	Flags string `json:"flags,omitempty"`
}

type upMember struct {
	ID       int    `json:"id"`
	Address  string `json:"address"`
	Role     string `json:"role"`
	PID      int    `json:"pid"`
	AdminURL string `json:"admin_url,omitempty"`
	LogFile  string `json:"log_file"`
}

func runClusterUp(ctx context.Context, out io.Writer, o clusterUpOptions) error {
	cluster.RemoveStaleRecords() // records of "cluster up" processes that died
	ens, err := loadrun.StartEnsemble(ctx, ensemble.Options{Nodes: o.nodes, NoFsync: !o.fsync, Dir: o.dir, HeapMB: clusterHeapMB, ClientPort: o.port, TLS: o.tls}, os.Stderr)
	if err != nil {
		return err
	}
	defer ens.Stop()

	notices := func(s string) { fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), s) }
	token := cluster.NewToken()
	ctl := cluster.NewController(ens, token, notices)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("control endpoint: %w", err)
	}
	sctx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan struct{})
	go func() {
		defer close(served)
		ctl.Serve(sctx, l)
	}()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		ctl.Watch(sctx, time.Second)
	}()
	defer func() {
		stopServing()
		<-served
		<-watched
	}()
	if remove, err := cluster.WriteRecord(ens, l.Addr().String(), token); err == nil {
		defer remove()
	} else {
		notices(fmt.Sprintf("cannot write the cluster record (%v): cluster kill/pause/resume/restart will not find this ensemble", err))
	}

	info := describeEnsemble(ctx, ens)
	if o.output == "json" {
		if err := writeJSON(out, info); err != nil {
			return err
		}
	} else {
		printUpInfo(out, info)
	}
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "\nstopping the ensemble...")
	stopServing()
	<-served
	<-watched
	if err := ens.Stop(); err != nil {
		return fmt.Errorf("stopping the ensemble: %w", err)
	}
	fmt.Fprintln(os.Stderr, "stopped; nothing left behind.")
	return nil
}

func describeEnsemble(ctx context.Context, ens *ensemble.Ensemble) upInfo {
	leader, _ := ens.Leader(context.WithoutCancel(ctx))
	members := ens.Members()
	info := upInfo{ConnectString: ens.ConnectString(), TLS: ens.TLS()}
	for _, m := range members {
		role := "follower"
		switch {
		case len(members) == 1:
			role = "standalone"
		case m.ID == leader:
			role = "leader"
		}
		info.Members = append(info.Members, upMember{ID: m.ID, Address: m.ClientAddr, Role: role, PID: m.PID, AdminURL: m.AdminURL, LogFile: m.LogFile})
	}
	if t := ens.TLS(); t != nil {
		info.Flags = fmt.Sprintf("--tls-ca %s --tls-cert %s --tls-key %s", t.CA, t.Cert, t.Key)
	}
	return info
}

func printUpInfo(out io.Writer, info upInfo) {
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
	output    outputFormat
}

func newClusterStatusCmd(g *globalOptions) *cobra.Command {
	o := clusterStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each member's mode, zxid, connections, znodes, and which admin interfaces answer",
		Long: `Polls every server of --server once: mode, last zxid, connections, znode count,
watches, outstanding requests and latency, then says which four-letter words
and AdminServer commands answer, and the exact config line that enables what
is missing.

Exit status: 0 when every member answers and one leads; 1 when a member is
down or no leader is elected (the status is printed all the same); 2 when no
member answers.

Without --server, the ensemble is the one "zkherd cluster up" of yours is
running (with its certificates, for a TLS one).

The AdminServer is looked for at http://<host>:8080 (https with --tls-ca)
unless --admin-url names it (one per server, in --server order); ensembles
started by "zkherd cluster up" are found automatically.`,
		Example: "  zkherd cluster status --server 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183\n  zkherd cluster status --server 127.0.0.1:2181 -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.output.check(); err != nil {
				return err
			}
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
				if tlsCfg == nil && rec.TLS != nil {
					if tlsCfg, err = (connstr.TLS{CA: rec.TLS.CA, Cert: rec.TLS.Cert, Key: rec.TLS.Key}).Config(); err != nil {
						return usageErr("the certificates of the running cluster up: %v", err)
					}
				}
			}
			if len(o.adminURLs) > 0 && len(o.adminURLs) != len(cs.Servers) {
				return usageErr("--admin-url: %d given for %d servers; give one per server, in --server order", len(o.adminURLs), len(cs.Servers))
			}
			members := make([]fourlw.Member, len(cs.Servers))
			for i, addr := range cs.Servers {
				members[i] = fourlw.Member{ID: i + 1, Addr: addr, AdminURL: adminURLFor(addr, i, o.adminURLs, tlsCfg != nil), TLS: tlsCfg}
			}
			st := cluster.Poll(cmd.Context(), members, o.timeout)
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			if o.output == "json" {
				err = writeJSON(cmd.OutOrStdout(), st)
			} else {
				err = st.WriteText(cmd.OutOrStdout())
			}
			if err != nil {
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
		},
	}
	cmd.Flags().StringSliceVar(&o.adminURLs, "admin-url", nil, "AdminServer base URL per server, e.g. http://127.0.0.1:8080")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 3*time.Second, "how long to wait for each member")
	o.output.register(cmd)
	return cmd
}

// adminURLFor picks the AdminServer to try for a member: the flag, the
// record "cluster up" left, or the server's default port.
func adminURLFor(addr string, i int, flagURLs []string, https bool) string {
	if i < len(flagURLs) {
		return flagURLs[i]
	}
	if u, ok := cluster.RecordedAdminURL(addr); ok {
		return u
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, "8080")
}

type clusterMemberOptions struct {
	timeout time.Duration
	output  outputFormat
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
		Use:   op + " MEMBER",
		Short: what,
		Long: what + `.

MEMBER is a member number (1..N, as "cluster up" lists them) or its client
address. The ensemble is the one "zkherd cluster up" of yours is running; with
several running, --server picks the one that has its addresses.`,
		Example: fmt.Sprintf("  zkherd cluster %s 2\n  zkherd cluster %s 127.0.0.1:2182 --server 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183", op, op),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.output.check(); err != nil {
				return err
			}
			cs, _, err := g.connectString()
			if err != nil {
				return err
			}
			rec, err := cluster.Find(cs.Servers)
			if err != nil {
				return usageErr("%v", err)
			}
			id, err := memberID(rec, args[0])
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			r, err := cluster.Send(ctx, rec, op, id)
			if err != nil {
				return usageErr("%s member %d: %v", op, id, err)
			}
			if o.output == "json" {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			fmt.Fprintln(cmd.OutOrStdout(), r.Message)
			return nil
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the member (a restart waits until it serves)")
	o.output.register(cmd)
	return cmd
}

// memberID reads MEMBER: a number from 1 to N, or a client address.
func memberID(rec cluster.Record, arg string) (int, error) {
	if n, err := strconv.Atoi(arg); err == nil {
		if n < 1 || n > len(rec.Members) {
			return 0, usageErr("member %d: the ensemble at %s has members 1 to %d", n, rec.ConnectString(), len(rec.Members))
		}
		return n, nil
	}
	if m, ok := rec.Member(arg); ok {
		return m.ID, nil
	}
	return 0, usageErr("member %q: give a member number (1 to %d) or one of %s", arg, len(rec.Members), rec.ConnectString())
}
