package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/loadrun"
)

func newClusterCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start a local ZooKeeper ensemble, or show the status of one",
	}
	cmd.AddCommand(newClusterUpCmd(g), newClusterStatusCmd(g))
	return cmd
}

// clusterHeapMB is each member's JVM heap for user-facing ensembles: room
// for thousands of sessions and their watches (tests use less).
const clusterHeapMB = 1024

type clusterUpOptions struct {
	nodes int
	fsync bool
	dir   string
	port  int
}

func newClusterUpCmd(g *globalOptions) *cobra.Command {
	o := clusterUpOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local 1- or 3-node ensemble on 127.0.0.1 and keep it until Ctrl-C",
		Example: `  zkherd cluster up --nodes 3
  zkherd cluster status --server <printed connect string>`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.nodes != 1 && o.nodes != 3 {
				return usageErr("--nodes %d: choose 1 or 3", o.nodes)
			}
			if o.port < 0 || o.port > 65535-o.nodes+1 {
				return usageErr("--port %d: choose a port from 1 to %d, or leave it out", o.port, 65535-o.nodes+1)
			}
			return runClusterUp(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().IntVar(&o.nodes, "nodes", 1, "ensemble size: 1 or 3")
	cmd.Flags().BoolVar(&o.fsync, "fsync", true, "fsync the transaction log (--fsync=false is faster, for tests and demos)")
	cmd.Flags().IntVar(&o.port, "port", 0, "client port of member 1 (member i uses port+i-1; default: free ports)")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for data and logs (default: a temporary directory, removed on exit; a directory you name is kept)")
	return cmd
}

func runClusterUp(ctx context.Context, out io.Writer, o clusterUpOptions) error {
	removeStaleClusterRecords() // records of "cluster up" processes that died
	ens, err := loadrun.StartEnsemble(ctx, ensemble.Options{Nodes: o.nodes, NoFsync: !o.fsync, Dir: o.dir, HeapMB: clusterHeapMB, ClientPort: o.port}, os.Stderr)
	if err != nil {
		return err
	}
	defer ens.Stop()
	if remove, err := writeClusterRecord(ens); err == nil {
		defer remove()
	}
	leader, _ := ens.Leader(context.WithoutCancel(ctx))
	fmt.Fprintf(out, "ZooKeeper ensemble up: %d member(s)\n", len(ens.Members()))
	for _, m := range ens.Members() {
		role := "follower"
		switch {
		case len(ens.Members()) == 1:
			role = "standalone"
		case m.ID == leader:
			role = "leader"
		}
		admin := m.AdminURL
		if admin == "" {
			admin = "(AdminServer off)"
		}
		fmt.Fprintf(out, "  member %d  %-21s %-10s pid %-7d admin %s\n", m.ID, m.ClientAddr, role, m.PID, admin)
	}
	fmt.Fprintf(out, "\nconnect string: %s\n\n", ens.ConnectString())
	fmt.Fprintf(out, "  zkherd cluster status --server %s\n  zkherd inspect --server %s\n\nPress Ctrl-C to stop and remove it.\n", ens.ConnectString(), ens.ConnectString())
	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping the ensemble...")
	if err := ens.Stop(); err != nil {
		return fmt.Errorf("stopping the ensemble: %w", err)
	}
	fmt.Fprintln(out, "stopped; nothing left behind.")
	return nil
}

type clusterStatusOptions struct {
	adminURLs []string
	timeout   time.Duration
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

The AdminServer is looked for at http://<host>:8080 unless --admin-url names it
(one per server, in --server order); ensembles started by "zkherd cluster up"
are found automatically.`,
		Example: "  zkherd cluster status --server 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, ok, err := g.connectString()
			if err != nil {
				return err
			}
			if !ok {
				return usageErr("cluster status needs --server host:port[,host:port...] (start one with: zkherd cluster up)")
			}
			if len(o.adminURLs) > 0 && len(o.adminURLs) != len(cs.Servers) {
				return usageErr("--admin-url: %d given for %d servers; give one per server, in --server order", len(o.adminURLs), len(cs.Servers))
			}
			members := make([]fourlw.Member, len(cs.Servers))
			for i, addr := range cs.Servers {
				members[i] = fourlw.Member{ID: i + 1, Addr: addr, AdminURL: adminURLFor(addr, i, o.adminURLs)}
			}
			ok, err = printClusterStatus(cmd.Context(), cmd.OutOrStdout(), members, o.timeout)
			if err != nil {
				return err
			}
			if !ok {
				return usageErr("no member of %s answered: is ZooKeeper running there? (check --server; start one with: zkherd cluster up)", cs.String())
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&o.adminURLs, "admin-url", nil, "AdminServer base URL per server, e.g. http://127.0.0.1:8080")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 3*time.Second, "how long to wait for each member")
	return cmd
}

// adminURLFor picks the AdminServer to try for a member: the flag, the
// record "cluster up" left, or the server's default port.
func adminURLFor(addr string, i int, flagURLs []string) string {
	if i < len(flagURLs) {
		return flagURLs[i]
	}
	if u, ok := recordedAdminURL(addr); ok {
		return u
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return "http://" + net.JoinHostPort(host, "8080")
}

// printClusterStatus polls members once and prints a table and the
// capability report; ok is false when no member answered.
func printClusterStatus(ctx context.Context, out io.Writer, members []fourlw.Member, timeout time.Duration) (ok bool, err error) {
	pctx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	defer cancel()
	var (
		snap fourlw.Snapshot
		caps fourlw.Capabilities
		wg   sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		snap = fourlw.PollOnce(pctx, members, fourlw.WithTimeout(timeout), fourlw.WithCommands(fourlw.CmdSrvr, fourlw.CmdMntr))
	}()
	go func() {
		defer wg.Done()
		caps = fourlw.Probe(pctx, members)
	}()
	wg.Wait()
	if ctx.Err() != nil {
		return false, ctx.Err()
	}

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tADDRESS\tMODE\tZXID\tCONNS\tZNODES\tWATCHES\tEPHEMERALS\tOUTSTANDING\tLATENCY min/avg/max ms")
	leaders := 0
	for _, m := range snap.Members {
		if !m.Up {
			fmt.Fprintf(tw, "%d\t%s\tDOWN\t%s\n", m.Member.ID, m.Member.Addr, oneLine(m.Err))
			continue
		}
		ok = true
		mode := m.Mode()
		if mode == fourlw.ModeLeader || mode == fourlw.ModeStandalone {
			leaders++
		}
		zxid, conns, znodes, outstanding, latency := "-", "-", "-", "-", "-"
		if st := m.Stat; st != nil {
			zxid = st.Zxid.String()
			conns = fmt.Sprint(st.Connections)
			znodes = fmt.Sprint(st.NodeCount)
			outstanding = fmt.Sprint(st.Outstanding)
			latency = fmt.Sprintf("%d/%.1f/%d", st.LatencyMin, st.LatencyAvg, st.LatencyMax)
		}
		watches, ephemerals := "-", "-"
		if m.Mntr != nil {
			watches = fmt.Sprint(m.Mntr.WatchCount())
			ephemerals = fmt.Sprint(m.Mntr.EphemeralsCount())
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Member.ID, m.Member.Addr, mode, zxid, conns, znodes, watches, ephemerals, outstanding, latency)
	}
	tw.Flush()
	if ok {
		switch {
		case len(members) > 1 && leaders == 1:
			fmt.Fprintf(out, "\n%d of %d members up, one leader.\n", snap.Up(), len(members))
		case len(members) > 1:
			fmt.Fprintf(out, "\n%d of %d members up, %d leaders seen (the ensemble may be electing, or --server lists servers of different ensembles).\n", snap.Up(), len(members), leaders)
		}
	}

	fmt.Fprintln(out, "\nAdmin interfaces:")
	for _, mc := range caps {
		if !mc.Reachable {
			fmt.Fprintf(out, "  %s: unreachable\n", mc.Member)
			continue
		}
		var fourOK, fourNo []string
		for _, c := range mc.Commands {
			if c.FourLW {
				fourOK = append(fourOK, string(c.Command))
			} else {
				fourNo = append(fourNo, string(c.Command))
			}
		}
		line := fmt.Sprintf("  %s: four-letter words: %d of %d answer", mc.Member, len(fourOK), len(mc.Commands))
		if len(fourNo) > 0 {
			line += fmt.Sprintf(" (refused: %s; enable with %q in zoo.cfg)", strings.Join(fourNo, " "), fourlw.ConfigLine)
		}
		if mc.AdminServer {
			line += "; AdminServer answers at " + mc.Member.AdminURL
		} else {
			line += "; AdminServer: no answer (enable with " + fourlw.AdminConfigHint + ")"
		}
		fmt.Fprintln(out, line)
	}
	return ok, nil
}

func oneLine(err error) string {
	if err == nil {
		return "no answer"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
