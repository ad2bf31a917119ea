package inspect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// status builds one member's poll from replies captured from ZooKeeper 3.8
// (testdata/<cmd>_<role>.txt, the fourlw package's captures).
func status(t *testing.T, addr, role string) fourlw.MemberStatus {
	t.Helper()
	read := func(cmd string) string {
		b, err := os.ReadFile(filepath.Join("testdata", cmd+"_"+role+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	st := fourlw.MemberStatus{Member: fourlw.Member{Addr: addr}, Polled: true, Up: true, Errors: map[fourlw.Command]error{},
		CmdTook: map[fourlw.Command]time.Duration{}, At: time.Unix(1, 0)}
	for _, c := range fourlw.DefaultCommands() {
		st.CmdTook[c] = time.Millisecond
	}
	var err error
	stat, err := fourlw.ParseSrvr(read("srvr"))
	if err != nil {
		t.Fatal(err)
	}
	st.Stat = &stat
	if st.Mntr, err = fourlw.ParseMntr(read("mntr")); err != nil {
		t.Fatal(err)
	}
	if st.Conns, err = fourlw.ParseCons(read("cons")); err != nil {
		t.Fatal(err)
	}
	if st.WatchesByPath, err = fourlw.ParseWchp(read("wchp")); err != nil {
		t.Fatal(err)
	}
	dump, err := fourlw.ParseDump(read("dump"))
	if err != nil {
		t.Fatal(err)
	}
	st.Dump = &dump
	return st
}

func TestMergeThreeMembers(t *testing.T) {
	polls := []memberPoll{
		fromStatus(status(t, "127.0.0.1:1", "follower")),
		fromStatus(status(t, "127.0.0.1:2", "leader")),
		fromStatus(fourlw.MemberStatus{Member: fourlw.Member{Addr: "127.0.0.1:3"}, Polled: true, Err: errors.New("connection refused")}),
	}
	c := mergePolls(time.Unix(0, 0), polls)

	if got, want := c.UpMembers(), 2; got != want {
		t.Errorf("members up = %d, want %d", got, want)
	}
	if m := c.Members[2]; m.Up || m.Err != "connection refused" {
		t.Errorf("dead member = %+v, want down with its error", m)
	}
	if got, want := c.Members[1].Mode, "leader"; got != want {
		t.Errorf("mode of member 2 = %q, want %q", got, want)
	}
	// Every session of the ensemble, from the dumps, once each.
	if got, want := len(c.Sessions), 16; got != want {
		t.Errorf("sessions = %d, want %d", got, want)
	}
	// A session connected to the follower has its endpoint from cons.
	s, ok := c.Session(0x1000001f3b60002)
	if !ok || s.Endpoint != "127.0.0.1:46344" || s.Member != "127.0.0.1:1" {
		t.Errorf("session 0x1000001f3b60002 = %+v, %v; want endpoint 127.0.0.1:46344 on 127.0.0.1:1", s, ok)
	}
	// Its ephemeral node, from dump.
	if len(s.Ephemerals) != 1 || s.Ephemerals[0] != "/zkherd/fair/_c_0f0e-lock-0000000003" {
		t.Errorf("ephemerals of 0x1000001f3b60002 = %v", s.Ephemerals)
	}
	// wchp of both members merged: the herd node has watchers on each.
	if got := c.Watchers("/zkherd/herd/lock"); len(got) != 3 {
		t.Errorf("watchers of the herd node = %v, want 3 sessions", got)
	}
	// In these captures every watch is a data watch.
	n, known := c.ChildWatches()
	if !known || c.TotalWatches != 6 || c.ItemisedWatches != 6 || n != 0 {
		t.Errorf("watches total %d itemised %d child %d (known %v), want 6, 6, 0", c.TotalWatches, c.ItemisedWatches, n, known)
	}
	// The blind spot: mntr counts child watches, wchp does not list them.
	polls[0].Mntr["zk_watch_count"] = "5"
	c = mergePolls(time.Unix(0, 0), polls)
	if n, known := c.ChildWatches(); !known || n != 2 {
		t.Errorf("child watches = %d (known %v), want 2 = mntr 8 - wchp 6", n, known)
	}
	if !c.SessionsComplete {
		t.Error("SessionsComplete = false, but every member up answered cons")
	}
}

func TestMergeWithoutFourLetterWords(t *testing.T) {
	// srvr answers (it is whitelisted by default), nothing else does.
	st := status(t, "127.0.0.1:1", "standalone")
	for _, cmd := range []fourlw.Command{fourlw.CmdMntr, fourlw.CmdCons, fourlw.CmdWchp, fourlw.CmdDump} {
		st.Errors[cmd] = &fourlw.ErrNotWhitelisted{Cmd: string(cmd), Addr: "127.0.0.1:1"}
	}
	st.Mntr, st.Conns, st.WatchesByPath, st.Dump = nil, nil, nil, nil
	c := mergePolls(time.Unix(0, 0), []memberPoll{fromStatus(st)})
	if len(c.Sessions) != 0 || len(c.Watches) != 0 {
		t.Errorf("sessions %d, watches %d from a member that answered neither cons nor wchp", len(c.Sessions), len(c.Watches))
	}
	if c.SessionsComplete {
		t.Error("SessionsComplete = true without cons")
	}
	if _, known := c.ChildWatches(); known {
		t.Error("child watches known without mntr and wchp")
	}
	if got := c.Members[0]; !got.Up || got.Mode != "standalone" {
		t.Errorf("member = %+v, want up, standalone (from srvr)", got)
	}
}

// TestCapabilities: what the polls asked becomes capabilities: a refusal
// names the config line that enables the command, a command answered (by
// the AdminServer too) is available, a timeout says nothing, and a command
// never asked (wchp over the watch budget) is not listed. A notice names
// the refused ones.
func TestCapabilities(t *testing.T) {
	refused := func(cmd fourlw.Command) error {
		return &fourlw.ErrNotWhitelisted{Cmd: string(cmd), Addr: "127.0.0.1:1"}
	}
	st := status(t, "127.0.0.1:1", "standalone")
	st.CmdTook = map[fourlw.Command]time.Duration{fourlw.CmdSrvr: 1, fourlw.CmdCons: 1, fourlw.CmdMntr: 1, fourlw.CmdDump: 1}
	st.Errors = map[fourlw.Command]error{fourlw.CmdCons: refused(fourlw.CmdCons), fourlw.CmdDump: context.DeadlineExceeded}
	p := &fourlwPoller{caps: []map[fourlw.Command]Capability{{}}}
	learnCaps(p.caps[0], st)
	caps := p.capsOf(0)
	want := []Capability{
		{Member: "127.0.0.1:1", Command: "srvr", Available: true},
		{Member: "127.0.0.1:1", Command: "mntr", Available: true}, // answered, by the AdminServer or not
		{Member: "127.0.0.1:1", Command: "cons", Enable: "4lw.commands.whitelist=srvr,mntr,cons,dump,wchp"},
	}
	if len(caps) != len(want) {
		t.Fatalf("caps = %+v, want %+v", caps, want)
	}
	for i := range want {
		if caps[i] != want[i] {
			t.Errorf("cap %d = %+v, want %+v", i, caps[i], want[i])
		}
	}
	if got := missingCaps(caps); got != "unavailable: cons; enable with: 4lw.commands.whitelist=srvr,mntr,cons,dump,wchp (plus any others your tools use, e.g. ruok) (see Servers)" {
		t.Errorf("notice = %q", got)
	}
	if got := missingCaps(want[:1]); got != "" {
		t.Errorf("notice with nothing missing = %q", got)
	}
}

func TestMemberStates(t *testing.T) {
	tests := []struct {
		name    string
		st      fourlw.MemberStatus
		err     string
		pending bool
	}{
		// Not polled yet: neither up nor down (its first poll is in flight).
		{"not polled yet", fourlw.MemberStatus{Member: fourlw.Member{Addr: "a"}}, "", true},
		{"refused", fourlw.MemberStatus{Member: fourlw.Member{Addr: "a"}, Polled: true, Err: errors.New("dial tcp: connection refused")}, "dial tcp: connection refused", false},
		{"no quorum", fourlw.MemberStatus{Member: fourlw.Member{Addr: "a"}, Polled: true, Err: fourlw.ErrNotServing}, "not serving requests (no quorum?)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memberFrom(fromStatus(tt.st))
			if m.Up || m.Err != tt.err || m.Pending != tt.pending {
				t.Errorf("member = up %v, pending %v, err %q; want down, pending %v, err %q", m.Up, m.Pending, m.Err, tt.pending, tt.err)
			}
		})
	}
}

// TestNewerAnswerWins: srvr and mntr both answer a member's outstanding
// requests, connections and znodes. mntr goes minutes apart while the
// Servers view is not on screen, srvr every 15 s: the figures shown (and
// read by the back-off) come from the newer of the two, not from mntr
// whatever its age.
func TestNewerAnswerWins(t *testing.T) {
	now := time.Now()
	mntr := map[string]string{"zk_outstanding_requests": "0", "zk_num_alive_connections": "10", "zk_znode_count": "100",
		"zk_watch_count": "7"}
	srvr := &srvrInfo{Mode: "leader", Outstanding: 50, Connections: 12, Znodes: 105}
	for _, tt := range []struct {
		name           string
		srvrAt, mntrAt time.Time
		outstanding    int64
		connections    int64
		znodes         int64
	}{
		{"srvr newer", now, now.Add(-2 * time.Minute), 50, 12, 105},
		{"mntr newer", now.Add(-10 * time.Second), now, 0, 10, 100},
	} {
		m := memberFrom(memberPoll{Addr: "m", At: now, Srvr: srvr, Mntr: mntr, SrvrAt: tt.srvrAt, MntrAt: tt.mntrAt})
		if m.Outstanding != tt.outstanding || m.Connections != tt.connections || m.Znodes != tt.znodes {
			t.Errorf("%s: outstanding %d, connections %d, znodes %d; want %d, %d, %d", tt.name,
				m.Outstanding, m.Connections, m.Znodes, tt.outstanding, tt.connections, tt.znodes)
		}
		if m.Watches != 7 {
			t.Errorf("%s: watches %d, want mntr's 7 (srvr does not say)", tt.name, m.Watches)
		}
	}
}
