package fourlw_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/fourlw"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func membersOf(ens *ensemble.Ensemble) []fourlw.Member {
	var ms []fourlw.Member
	for _, m := range ens.Members() {
		ms = append(ms, fourlw.Member{ID: m.ID, Addr: m.ClientAddr, AdminURL: m.AdminURL})
	}
	return ms
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// session connects one ZooKeeper session to addr only and closes it at
// the end of the test.
func session(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for c.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-ctx.Done():
			t.Fatalf("no session with %s: %v", addr, c.State())
		}
	}
	go func() {
		for range events { // drained until Close closes it
		}
	}()
	return c
}

// herdSetup creates on addr what the inspector looks at: an ephemeral
// lock node held by one session, watched by others with exists, and a
// queue directory with a child watch. It returns the holder and watcher
// sessions.
func herdSetup(t *testing.T, addrs []string, watchers int) (holder *zk.Conn, ws []*zk.Conn) {
	t.Helper()
	acl := zk.WorldACL(zk.PermAll)
	holder = session(t, addrs[0])
	for _, p := range []string{"/fourlw", "/fourlw/queue"} {
		if _, err := holder.Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	if _, err := holder.Create("/fourlw/lock", []byte("held"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	for i := range watchers {
		c := session(t, addrs[i%len(addrs)])
		if ok, _, _, err := c.ExistsW("/fourlw/lock"); err != nil || !ok {
			t.Fatalf("ExistsW: %v, %v", ok, err)
		}
		ws = append(ws, c)
	}
	if _, _, _, err := holder.ChildrenW("/fourlw/queue"); err != nil {
		t.Fatal(err)
	}
	return holder, ws
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestQueryEveryCommand asks a live server every command and checks what
// the replies say about sessions, watches and ephemerals we created.
func TestQueryEveryCommand(t *testing.T) {
	ens := enstest.Start(t, 1)
	addr := ens.Servers()[0]
	holder, watchers := herdSetup(t, []string{addr}, 3)
	holderID := fourlw.SessionID(holder.SessionID())

	replies := map[fourlw.Command]string{}
	for _, cmd := range fourlw.AllCommands() {
		reply, err := fourlw.QueryTLS(ctxTimeout(t, 5*time.Second), addr, string(cmd), nil)
		if err != nil {
			t.Fatalf("QueryTLS(%s): %v", cmd, err)
		}
		replies[cmd] = reply
	}

	t.Run("srvr", func(t *testing.T) {
		st, err := fourlw.ParseSrvr(replies[fourlw.CmdSrvr])
		if err != nil || st.Mode != fourlw.ModeStandalone || st.NodeCount < 4 || !strings.HasPrefix(st.Version, "3.") {
			t.Errorf("srvr = %+v, %v", st, err)
		}
	})
	t.Run("stat", func(t *testing.T) {
		st, err := fourlw.ParseStat(replies[fourlw.CmdStat])
		if err != nil || len(st.Clients) < 4 {
			t.Errorf("stat = %+v, %v; want our 4 sessions among the clients", st, err)
		}
	})
	t.Run("mntr", func(t *testing.T) {
		m, err := fourlw.ParseMntr(replies[fourlw.CmdMntr])
		if err != nil {
			t.Fatal(err)
		}
		// 3 data watches plus 1 child watch: wchs sees only the data ones.
		if m.WatchCount() != 4 || m.EphemeralsCount() != 1 || m.ServerState() != fourlw.ModeStandalone || m.NumAliveConnections() < 4 {
			t.Errorf("watches %d, ephemerals %d, state %s, connections %d; want 4, 1, standalone, >= 4",
				m.WatchCount(), m.EphemeralsCount(), m.ServerState(), m.NumAliveConnections())
		}
		for _, name := range fourlw.FanOutMetrics() {
			if _, ok := m.Summary(name); !ok {
				t.Errorf("no %s summary", name)
			}
		}
	})
	t.Run("cons", func(t *testing.T) {
		conns, err := fourlw.ParseCons(replies[fourlw.CmdCons])
		if err != nil {
			t.Fatal(err)
		}
		var ids []fourlw.SessionID
		for _, c := range conns {
			if c.HasSession {
				ids = append(ids, c.Session)
			}
		}
		for _, c := range append([]*zk.Conn{holder}, watchers...) {
			if !slices.Contains(ids, fourlw.SessionID(c.SessionID())) {
				t.Errorf("cons lacks session %v: %v", fourlw.SessionID(c.SessionID()), ids)
			}
		}
	})
	t.Run("wchp", func(t *testing.T) {
		w, err := fourlw.ParseWchp(replies[fourlw.CmdWchp])
		if err != nil {
			t.Fatal(err)
		}
		var want []fourlw.SessionID
		for _, c := range watchers {
			want = append(want, fourlw.SessionID(c.SessionID()))
		}
		got := slices.Sorted(slices.Values(w["/fourlw/lock"]))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("watchers of /fourlw/lock = %v, want %v", got, want)
		}
		if _, ok := w["/fourlw/queue"]; ok {
			t.Error("wchp lists the child watch; ZooKeeper 3.8 does not, has that changed?")
		}
	})
	t.Run("wchc", func(t *testing.T) {
		w, err := fourlw.ParseWchc(replies[fourlw.CmdWchc])
		if err != nil || !slices.Equal(w[fourlw.SessionID(watchers[0].SessionID())], []string{"/fourlw/lock"}) {
			t.Errorf("wchc = %v, %v", w, err)
		}
	})
	t.Run("wchs", func(t *testing.T) {
		w, err := fourlw.ParseWchs(replies[fourlw.CmdWchs])
		if err != nil || w != (fourlw.WatchSummary{Connections: 3, Paths: 1, Watches: 3}) {
			t.Errorf("wchs = %+v, %v", w, err)
		}
	})
	t.Run("dump", func(t *testing.T) {
		d, err := fourlw.ParseDump(replies[fourlw.CmdDump])
		if err != nil {
			t.Fatal(err)
		}
		if owner, ok := d.Owner("/fourlw/lock"); !ok || owner != holderID {
			t.Errorf("Owner(/fourlw/lock) = %v, %v; want %v", owner, ok, holderID)
		}
		if len(d.Sessions) < 4 {
			t.Errorf("%d sessions, want at least 4", len(d.Sessions))
		}
	})
	t.Run("conf", func(t *testing.T) {
		c, err := fourlw.ParseConf(replies[fourlw.CmdConf])
		_, port, _ := net.SplitHostPort(addr)
		if err != nil || c["clientPort"] != port || c["maxClientCnxns"] != "0" {
			t.Errorf("conf = %v, %v; want clientPort %s", c, err, port)
		}
	})
	t.Run("envi", func(t *testing.T) {
		e, err := fourlw.ParseEnvi(replies[fourlw.CmdEnvi])
		if err != nil || e["java.version"] == "" {
			t.Errorf("envi = %v, %v", e, err)
		}
	})
	t.Run("ruok and isro", func(t *testing.T) {
		if replies[fourlw.CmdRuok] != "imok" || replies[fourlw.CmdIsro] != "rw" {
			t.Errorf("ruok %q, isro %q; want imok, rw", replies[fourlw.CmdRuok], replies[fourlw.CmdIsro])
		}
	})

	t.Run("AdminServer agrees", func(t *testing.T) {
		url := ens.Members()[0].AdminURL
		if url == "" {
			t.Fatal("the ensemble has no AdminServer; zkherd's ensemble should enable it")
		}
		a := fourlw.Admin{URL: url}
		ctx := ctxTimeout(t, 10*time.Second)
		m, err := a.Monitor(ctx)
		if err != nil || m.WatchCount() != 4 || m.ServerState() != fourlw.ModeStandalone {
			t.Errorf("Monitor = watches %d state %q, %v", m.WatchCount(), m.ServerState(), err)
		}
		conns, err := a.Connections(ctx)
		if err != nil || !slices.ContainsFunc(conns, func(c fourlw.Conn) bool { return c.Session == holderID }) {
			t.Errorf("Connections lacks the holder %v: %v, %v", holderID, conns, err)
		}
		w, err := a.WatchesByPath(ctx)
		if err != nil || len(w["/fourlw/lock"]) != 3 {
			t.Errorf("WatchesByPath = %v, %v", w, err)
		}
		ws, err := a.Watches(ctx)
		if err != nil || len(ws) != 3 {
			t.Errorf("Watches = %v, %v", ws, err)
		}
		sum, err := a.WatchSummary(ctx)
		if err != nil || sum.Watches != 3 {
			t.Errorf("WatchSummary = %+v, %v", sum, err)
		}
		d, err := a.Dump(ctx)
		if owner, ok := d.Owner("/fourlw/lock"); err != nil || !ok || owner != holderID {
			t.Errorf("Dump owner = %v, %v, %v", owner, ok, err)
		}
		st, err := a.Stats(ctx)
		if err != nil || st.Mode != fourlw.ModeStandalone {
			t.Errorf("Stats = %+v, %v", st, err)
		}
		c, err := a.Configuration(ctx)
		if err != nil || len(c) == 0 {
			t.Errorf("Configuration = %v, %v", c, err)
		}
		if err := a.Do(ctx, "no_such_command", nil); err == nil || !strings.Contains(err.Error(), "Unknown command: no_such_command") {
			t.Errorf("Do(no_such_command) = %v, want the server's Unknown command", err)
		}
	})
}

func TestQueryErrors(t *testing.T) {
	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	t.Run("connection refused", func(t *testing.T) {
		_, err := fourlw.QueryTLS(ctxTimeout(t, 5*time.Second), closed, "srvr", nil)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), closed) || !strings.Contains(err.Error(), "is the server running?") {
			t.Errorf("QueryTLS(%s) = %v; want connection refused naming the address and asking whether the server runs", closed, err)
		}
	})
	t.Run("AdminServer refused", func(t *testing.T) {
		err := fourlw.Admin{URL: "http://" + closed}.Ruok(ctxTimeout(t, 5*time.Second))
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "admin.enableServer=true") {
			t.Errorf("Ruok = %v; want connection refused with how to enable the AdminServer", err)
		}
	})
	t.Run("not a four-letter word", func(t *testing.T) {
		if _, err := fourlw.QueryTLS(context.Background(), closed, "mntrx", nil); err == nil {
			t.Error("QueryTLS(mntrx) = nil error")
		}
	})
	t.Run("paused server times out", func(t *testing.T) {
		ens := enstest.Start(t, 1)
		if err := ens.Pause(1); err != nil {
			t.Fatal(err)
		}
		defer ens.Resume(1)
		start := time.Now()
		_, err := fourlw.QueryTLS(ctxTimeout(t, 300*time.Millisecond), ens.Servers()[0], "mntr", nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Query to a paused server = %v, want a deadline error", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("Query took %v, want about the 300ms timeout", took)
		}
		// Cancelling (no deadline) unblocks it too.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := fourlw.QueryTLS(ctx, ens.Servers()[0], "mntr", nil)
			done <- err
		}()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled Query = %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("cancelled Query did not return")
		}
	})
}

// restrictWhitelist restarts member 1 with only srvr and ruok whitelisted.
// The ensemble package has no option for extra zoo.cfg lines, so the line
// is appended to the member's zoo.cfg (Java properties: the last one wins).
func restrictWhitelist(t *testing.T, ens *ensemble.Ensemble) {
	t.Helper()
	if err := ens.StopMember(1); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(ens.Members()[0].ConfigFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("4lw.commands.whitelist=srvr, ruok\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := ens.Restart(ctxTimeout(t, 60*time.Second), 1); err != nil {
		t.Fatal(err)
	}
}

func TestWhitelistRefusalAndAdminFallback(t *testing.T) {
	ens := enstest.Start(t, 1)
	restrictWhitelist(t, ens)
	m := membersOf(ens)[0]
	if m.AdminURL == "" {
		t.Fatal("the ensemble has no AdminServer")
	}

	t.Run("Query", func(t *testing.T) {
		_, err := fourlw.QueryTLS(ctxTimeout(t, 5*time.Second), m.Addr, "mntr", nil)
		var refused *fourlw.ErrNotWhitelisted
		if !errors.As(err, &refused) || refused.Cmd != "mntr" || refused.Addr != m.Addr {
			t.Fatalf("QueryTLS(mntr) = %v, want ErrNotWhitelisted", err)
		}
		if !strings.Contains(err.Error(), `add "4lw.commands.whitelist=*" to zoo.cfg`) {
			t.Errorf("error %q does not name the config line", err)
		}
		if _, err := fourlw.QueryTLS(ctxTimeout(t, 5*time.Second), m.Addr, "srvr", nil); err != nil {
			t.Errorf("QueryTLS(srvr) = %v, want an answer (it is whitelisted)", err)
		}
	})
	t.Run("Client falls back to the AdminServer", func(t *testing.T) {
		c := fourlw.NewClient(m)
		for range 2 { // the second call goes straight to the AdminServer
			mn, err := c.Mntr(ctxTimeout(t, 5*time.Second))
			if err != nil || mn.ServerState() != fourlw.ModeStandalone {
				t.Fatalf("Mntr = %v, %v; want the AdminServer's monitor", mn.ServerState(), err)
			}
		}
		if !fourlw.UsesAdmin(c, fourlw.CmdMntr) || fourlw.UsesAdmin(c, fourlw.CmdSrvr) {
			t.Errorf("usesAdmin: mntr %v, srvr %v; want true, false", fourlw.UsesAdmin(c, fourlw.CmdMntr), fourlw.UsesAdmin(c, fourlw.CmdSrvr))
		}
		if _, err := c.Wchp(ctxTimeout(t, 5*time.Second)); err != nil {
			t.Errorf("Wchp = %v", err)
		}
	})
	t.Run("Client without an AdminServer", func(t *testing.T) {
		_, err := fourlw.NewClient(fourlw.Member{Addr: m.Addr}).Cons(ctxTimeout(t, 5*time.Second))
		var refused *fourlw.ErrNotWhitelisted
		if !errors.As(err, &refused) {
			t.Errorf("Cons = %v, want ErrNotWhitelisted", err)
		}
	})
	t.Run("Probe", func(t *testing.T) {
		caps := fourlw.Probe(ctxTimeout(t, 10*time.Second), []fourlw.Member{m, {ID: 9, Addr: m.Addr}})
		with, without := caps[0], caps[1]
		if !with.Reachable || !with.AdminServer || len(with.Missing()) != 0 {
			t.Errorf("with AdminServer: reachable %v, admin %v, missing %v", with.Reachable, with.AdminServer, with.Missing())
		}
		if c, _ := with.Capability(fourlw.CmdMntr); c.FourLW || !c.Admin {
			t.Errorf("mntr capability %+v, want AdminServer only", c)
		}
		if c, _ := with.Capability(fourlw.CmdSrvr); !c.FourLW {
			t.Errorf("srvr capability %+v, want four-letter word", c)
		}
		var missing []fourlw.Command
		for _, c := range without.Missing() {
			missing = append(missing, c.Command)
			if c.Fix() != fourlw.ConfigLine {
				t.Errorf("%s Fix() = %q, want %q", c.Command, c.Fix(), fourlw.ConfigLine)
			}
		}
		if len(missing) != len(fourlw.AllCommands())-2 || slices.Contains(missing, fourlw.CmdSrvr) || slices.Contains(missing, fourlw.CmdRuok) {
			t.Errorf("missing without AdminServer = %v, want everything but srvr and ruok", missing)
		}
		report := caps.Report()
		if len(report) != 2 || !strings.Contains(report[0], "through the AdminServer") ||
			!strings.Contains(report[1], `add "4lw.commands.whitelist=*" to zoo.cfg, or turn on the AdminServer`) {
			t.Errorf("Report() =\n%s", strings.Join(report, "\n"))
		}
	})
}

// nextSnapshot reads snapshots until ok accepts one.
func nextSnapshot(t *testing.T, ctx context.Context, snaps <-chan fourlw.Snapshot, what string, ok func(fourlw.Snapshot) bool) fourlw.Snapshot {
	t.Helper()
	var last fourlw.Snapshot
	for {
		select {
		case s, open := <-snaps:
			if !open {
				t.Fatalf("snapshots closed while waiting for %s", what)
			}
			if ok(s) {
				return s
			}
			last = s
		case <-ctx.Done():
			t.Fatalf("no snapshot with %s; last:\n%s", what, describe(last))
		}
	}
}

func describe(s fourlw.Snapshot) string {
	var b strings.Builder
	for _, m := range s.Members {
		b.WriteString(m.Member.String())
		if m.Up {
			b.WriteString(" up " + m.Mode())
		} else {
			b.WriteString(" down")
		}
		if m.Err != nil {
			b.WriteString(": " + m.Err.Error())
		}
		b.WriteString(" at " + m.At.Format("15:04:05.000") + "\n")
	}
	return b.String()
}

func TestPoller(t *testing.T) {
	ens := enstest.Start(t, 3)
	members := membersOf(ens)
	_, watchers := herdSetup(t, ens.Servers(), 3) // one watcher on each member

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := fourlw.NewPoller(members, fourlw.WithPeriod(200*time.Millisecond), fourlw.WithTimeout(time.Second),
		fourlw.WithCommands(fourlw.CmdSrvr, fourlw.CmdMntr, fourlw.CmdCons, fourlw.CmdWchp, fourlw.CmdDump))
	snaps := p.Start(ctx)
	wait := ctxTimeout(t, 60*time.Second)

	all := nextSnapshot(t, wait, snaps, "every member up with a window", func(s fourlw.Snapshot) bool {
		for _, m := range s.Members {
			if !m.Up || m.Window == nil || m.Caps == nil {
				return false
			}
		}
		return true
	})
	t.Run("merged views", func(t *testing.T) {
		leader, ok := all.Leader()
		if !ok || leader.Mode() != fourlw.ModeLeader {
			t.Errorf("Leader() = %v, %v", leader.Member, ok)
		}
		got := all.Watches()["/fourlw/lock"]
		if len(got) != 3 {
			t.Fatalf("merged watchers of /fourlw/lock = %v, want 3 (one per member)", got)
		}
		members := map[int]bool{}
		for _, w := range got {
			members[w.Member.ID] = true
			if c, ok := all.Conn(w.Session); !ok || c.Member.ID != w.Member.ID {
				t.Errorf("watcher %v on member %d: Conn = %+v, %v", w.Session, w.Member.ID, c, ok)
			}
		}
		if len(members) != 3 {
			t.Errorf("watchers on members %v, want all three", members)
		}
		var ids []fourlw.SessionID
		for _, c := range all.Conns() {
			ids = append(ids, c.Session)
		}
		for _, w := range watchers {
			if !slices.Contains(ids, fourlw.SessionID(w.SessionID())) {
				t.Errorf("merged Conns lack %v", fourlw.SessionID(w.SessionID()))
			}
		}
		if len(all.Ephemerals()) != 1 {
			t.Errorf("Ephemerals() = %v, want the holder's lock", all.Ephemerals())
		}
		for _, m := range all.Members {
			if len(m.Caps.Missing()) != 0 {
				t.Errorf("%v: missing %v", m.Member, m.Caps.Missing())
			}
		}
	})

	// Pick a follower to trouble, so the other two keep a quorum.
	leaderID, err := ens.Leader(wait)
	if err != nil {
		t.Fatal(err)
	}
	follower := 1
	if leaderID == 1 {
		follower = 2
	}
	others := func(s fourlw.Snapshot, after time.Time) bool {
		for _, m := range s.Members {
			if m.Member.ID != follower && (!m.Up || !m.At.After(after)) {
				return false
			}
		}
		return true
	}
	status := func(s fourlw.Snapshot) fourlw.MemberStatus { return s.Members[follower-1] }

	t.Run("paused member is down, others update", func(t *testing.T) {
		if err := ens.Pause(follower); err != nil {
			t.Fatal(err)
		}
		paused := time.Now()
		s := nextSnapshot(t, wait, snaps, "the paused member down", func(s fourlw.Snapshot) bool {
			return !status(s).Up && status(s).At.After(paused)
		})
		if !errors.Is(status(s).Err, context.DeadlineExceeded) {
			t.Errorf("paused member's error = %v, want a timeout", status(s).Err)
		}
		// The others kept answering while the paused member timed out.
		nextSnapshot(t, wait, snaps, "the others polled again", func(s fourlw.Snapshot) bool {
			return others(s, paused.Add(time.Second)) && !status(s).Up
		})
		if err := ens.Resume(follower); err != nil {
			t.Fatal(err)
		}
		resumed := time.Now()
		nextSnapshot(t, wait, snaps, "the resumed member up", func(s fourlw.Snapshot) bool {
			return status(s).Up && status(s).At.After(resumed)
		})
	})

	t.Run("killed member is down, others update", func(t *testing.T) {
		if err := ens.Kill(follower); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		s := nextSnapshot(t, wait, snaps, "the killed member down", func(s fourlw.Snapshot) bool {
			return !status(s).Up && status(s).At.After(killed)
		})
		// A poll in flight when the member died may see its connection
		// reset (or closed) rather than refused: the member is down all
		// the same, with no figures.
		died := func(err error) bool {
			return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
				errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		}
		if !died(status(s).Err) || status(s).Mntr != nil {
			t.Errorf("killed member: err %v, mntr %v; want connection refused (or reset) and no figures", status(s).Err, status(s).Mntr != nil)
		}
		// A poll begun after the kill finds nothing listening.
		s = nextSnapshot(t, wait, snaps, "the killed member refusing", func(s fourlw.Snapshot) bool {
			began := status(s).At.Add(-status(s).Took)
			return !status(s).Up && began.After(killed)
		})
		if !errors.Is(status(s).Err, syscall.ECONNREFUSED) || status(s).Mntr != nil {
			t.Errorf("killed member, poll begun after the kill: err %v, mntr %v; want connection refused and no figures", status(s).Err, status(s).Mntr != nil)
		}
		s = nextSnapshot(t, wait, snaps, "the others polled again", func(s fourlw.Snapshot) bool {
			return others(s, killed.Add(500*time.Millisecond))
		})
		if s.Up() != 2 {
			t.Errorf("Up() = %d, want 2", s.Up())
		}
		for _, w := range s.Watches()["/fourlw/lock"] {
			if w.Member.ID == follower {
				t.Errorf("merged watches still list the killed member's session %v", w.Session)
			}
		}
	})

	cancel()
	for range snaps { // the channel closes once every goroutine has stopped
	}
}

func TestPollOnce(t *testing.T) {
	ens := enstest.Start(t, 1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	s := fourlw.PollOnce(ctxTimeout(t, 20*time.Second), []fourlw.Member{membersOf(ens)[0], {ID: 2, Addr: dead}},
		fourlw.WithCommands(fourlw.CmdSrvr, fourlw.CmdMntr), fourlw.WithTimeout(2*time.Second))
	if up := s.Members[0]; !up.Up || up.Mode() != fourlw.ModeStandalone || up.Mntr == nil || up.Window != nil {
		t.Errorf("live member: up %v, mode %q, mntr %v, window %v", up.Up, up.Mode(), up.Mntr != nil, up.Window)
	}
	down := s.Members[1]
	if down.Up || !errors.Is(down.Err, syscall.ECONNREFUSED) || down.Errors[fourlw.CmdMntr] != nil {
		t.Errorf("dead member: up %v, err %v, mntr error %v; want down, refused, mntr not asked", down.Up, down.Err, down.Errors[fourlw.CmdMntr])
	}
	if _, ok := s.Leader(); !ok {
		t.Error("no leader: the standalone server leads")
	}
}

// A Poller's windows show the fan-out of a herd release.
func TestPollerWindowSeesHerd(t *testing.T) {
	ens := enstest.Start(t, 1)
	holder, _ := herdSetup(t, ens.Servers(), 5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps := fourlw.NewPoller(membersOf(ens), fourlw.WithPeriod(100*time.Millisecond), fourlw.WithCommands(fourlw.CmdMntr), fourlw.WithProbe()).Start(ctx)
	wait := ctxTimeout(t, 30*time.Second)
	before := nextSnapshot(t, wait, snaps, "a first window", func(s fourlw.Snapshot) bool { return s.Members[0].Window != nil })
	if err := holder.Delete("/fourlw/lock", -1); err != nil {
		t.Fatal(err)
	}
	after := nextSnapshot(t, wait, snaps, "the release's fan-out", func(s fourlw.Snapshot) bool {
		return s.Window().FanOut[fourlw.NodeDeletedWatchCount].Events > 0
	})
	// Snapshots a reader skips take their windows with them, so compare
	// the cumulative figures of the two snapshots read.
	w := fourlw.WindowOf(before.Members[0].Mntr, after.Members[0].Mntr, 0)
	if got := w.FanOut[fourlw.NodeDeletedWatchCount]; got != (fourlw.FanOut{Events: 1, Watchers: 5}) {
		t.Errorf("deleted fan-out %+v, want 1 event notifying 5 watchers", got)
	}
	cancel()
	for range snaps {
	}
}

// TestTLSAdminFallback: on a TLS-only server whose whitelist refuses mntr,
// the client gets fourlw.ErrNotWhitelisted over TLS and the answer from the
// AdminServer over HTTPS, both verified with the member's TLS settings.
func TestTLSAdminFallback(t *testing.T) {
	ens := enstest.StartTLS(t, 1)
	restrictWhitelist(t, ens)
	em := ens.Members()[0]
	if !strings.HasPrefix(em.AdminURL, "https://") {
		t.Fatalf("AdminURL = %q, want the AdminServer over HTTPS", em.AdminURL)
	}
	m := fourlw.Member{ID: 1, Addr: em.ClientAddr, AdminURL: em.AdminURL, TLS: ens.TLSConfig()}
	ctx := ctxTimeout(t, 30*time.Second)

	if _, err := fourlw.QueryTLS(ctx, m.Addr, "srvr", m.TLS); err != nil {
		t.Fatalf("srvr over TLS: %v", err)
	}
	var refused *fourlw.ErrNotWhitelisted
	if _, err := fourlw.QueryTLS(ctx, m.Addr, "mntr", m.TLS); !errors.As(err, &refused) {
		t.Fatalf("mntr over TLS: err = %v, want ErrNotWhitelisted", err)
	}
	mntr, err := fourlw.NewClient(m).Mntr(ctx)
	if err != nil {
		t.Fatalf("Mntr through the HTTPS AdminServer: %v", err)
	}
	if mntr.ServerState() != "standalone" {
		t.Errorf("Mntr server state = %q, want standalone", mntr.ServerState())
	}
	caps := fourlw.ProbeMember(ctx, m, fourlw.CmdSrvr, fourlw.CmdMntr)
	if !caps.AdminServer {
		t.Errorf("probe: AdminServer over HTTPS not seen: %v", caps.AdminErr)
	}

	// Without the CA the HTTPS AdminServer is not trusted.
	noCA := m
	noCA.TLS = &tls.Config{Certificates: ens.TLSConfig().Certificates}
	if err := fourlw.AdminOf(noCA).Ruok(ctx); err == nil {
		t.Errorf("AdminServer trusted without the CA")
	}
}
