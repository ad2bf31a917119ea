package fourlw

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// fixture returns a reply captured from ZooKeeper 3.8.0 (Debian) by
// running the commands against a 3-node ensemble and a standalone server
// holding a fair lock chain, a herd lock and queue watchers.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const version38 = "3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC"

func TestParseSrvr(t *testing.T) {
	tests := []struct {
		file string
		want Stat
	}{
		{"srvr_leader.txt", Stat{Version: version38, LatencyMin: 0, LatencyAvg: 2.1304, LatencyMax: 21, Received: 25, Sent: 26,
			Connections: 5, Zxid: 0x10000001e, Mode: ModeLeader, NodeCount: 17,
			HasProposalSizes: true, LastProposalSize: 118, MinProposalSize: 48, MaxProposalSize: 121}},
		{"srvr_follower.txt", Stat{Version: version38, LatencyAvg: 3.4318, LatencyMax: 37, Received: 46, Sent: 48,
			Connections: 8, Zxid: 0x10000001e, Mode: ModeFollower, NodeCount: 17}},
		{"srvr_standalone.txt", Stat{Version: version38, LatencyAvg: 1.125, LatencyMax: 15, Received: 81, Sent: 88,
			Connections: 17, Zxid: 0x1e, Mode: ModeStandalone, NodeCount: 17}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseSrvr(fixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSrvr =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	got, err := ParseStat(fixture(t, "stat_leader.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != ModeLeader || got.Received != 26 || got.Connections != 5 || got.Zxid.Epoch() != 1 || got.Zxid.Counter() != 0x1e {
		t.Errorf("ParseStat = %+v", got)
	}
	wantClients := []Conn{
		{Addr: "127.0.0.1:53764", Interest: 1, Received: 6, Sent: 6},
		{Addr: "127.0.0.1:53782", Interest: 1, Received: 5, Sent: 6},
		{Addr: "127.0.0.1:53756", Interest: 1, Received: 6, Sent: 6},
		{Addr: "127.0.0.1:53772", Interest: 1, Received: 6, Sent: 7},
		{Addr: "127.0.0.1:38918", Interest: 0, Received: 1, Sent: 0},
	}
	if !reflect.DeepEqual(got.Clients, wantClients) {
		t.Errorf("Clients =\n%+v\nwant\n%+v", got.Clients, wantClients)
	}
}

func TestParseSrvrErrors(t *testing.T) {
	tests := []struct {
		name, reply, want string
	}{
		{"empty", "", `fourlw: srvr: reply has no Mode line: ""`},
		// A field's value is named in words a user reads, never in Go's
		// parser text ("strconv.ParseInt: parsing ...: invalid syntax").
		{"bad number", "Received: lots\nMode: leader\n", `fourlw: srvr: answer not understood: Received "lots" is not a number`},
		{"too large", "Outstanding: 99999999999999999999\nMode: leader\n", `fourlw: srvr: answer not understood: Outstanding "99999999999999999999" is out of range`},
		{"bad zxid", "Zxid: 0xzz\nMode: leader\n", `fourlw: srvr: answer not understood: Zxid "0xzz" is not a number`},
		{"bad latency", "Latency min/avg/max: 1/2\nMode: leader\n", `fourlw: srvr: answer not understood: Latency min/avg/max "1/2" is not min/avg/max`},
		{"bad latency number", "Latency min/avg/max: 1/x/3\nMode: leader\n", `fourlw: srvr: answer not understood: Latency min/avg/max "1/x/3" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSrvr(tt.reply)
			if err == nil || err.Error() != tt.want {
				t.Errorf("ParseSrvr(%q) error = %v, want %s", tt.reply, err, tt.want)
			}
		})
	}
}

func TestParseMntr(t *testing.T) {
	tests := []struct {
		file                               string
		keys                               int
		state                              string
		znodes, watches, ephemerals, alive int64
		received, sent                     int64
		avg                                float64
		min, max                           int64
		deleted, children                  Summary
		followers                          int64
	}{
		{file: "mntr_leader.txt", keys: 539, state: ModeLeader, znodes: 17, watches: 3, ephemerals: 7, alive: 5,
			received: 27, sent: 28, avg: 2.1304, min: 0, max: 21,
			deleted:   Summary{Count: 1, Sum: 1, Avg: 1, Min: 1, Max: 1},
			children:  Summary{Count: 1, Sum: 1, Avg: 1, Min: 1, Max: 1},
			followers: 2},
		{file: "mntr_follower.txt", keys: 502, state: ModeFollower, znodes: 17, watches: 3, ephemerals: 7, alive: 8,
			received: 48, sent: 50, avg: 3.4318, min: 0, max: 37,
			deleted:  Summary{Count: 1, Sum: 2, Avg: 2, Min: 2, Max: 2},
			children: Summary{Count: 1, Sum: 1, Avg: 1, Min: 1, Max: 1}},
		{file: "mntr_standalone.txt", keys: 495, state: ModeStandalone, znodes: 17},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := ParseMntr(fixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(m) != tt.keys {
				t.Errorf("%d keys, want %d", len(m), tt.keys)
			}
			if m.Version() != version38 || m.ServerState() != tt.state || m.ZnodeCount() != tt.znodes {
				t.Errorf("version %q, state %q, znodes %d; want %q, %q, %d", m.Version(), m.ServerState(), m.ZnodeCount(), version38, tt.state, tt.znodes)
			}
			if m.Followers() != tt.followers {
				t.Errorf("Followers() = %d, want %d", m.Followers(), tt.followers)
			}
			if tt.file == "mntr_standalone.txt" {
				return
			}
			got := []int64{m.WatchCount(), m.EphemeralsCount(), m.NumAliveConnections(), m.PacketsReceived(), m.PacketsSent(), m.MinLatency(), m.MaxLatency(), m.OutstandingRequests()}
			want := []int64{tt.watches, tt.ephemerals, tt.alive, tt.received, tt.sent, tt.min, tt.max, 0}
			if !slices.Equal(got, want) {
				t.Errorf("watches, ephemerals, alive, received, sent, min, max, outstanding = %v, want %v", got, want)
			}
			if m.AvgLatency() != tt.avg {
				t.Errorf("AvgLatency() = %v, want %v", m.AvgLatency(), tt.avg)
			}
			for name, want := range map[string]Summary{NodeDeletedWatchCount: tt.deleted, NodeChildrenWatchCount: tt.children} {
				if got, ok := m.Summary(name); !ok || got != want {
					t.Errorf("Summary(%s) = %+v, %v; want %+v", name, got, ok, want)
				}
			}
			for _, name := range FanOutMetrics() {
				if _, ok := m.Summary(name); !ok {
					t.Errorf("Summary(%s) missing", name)
				}
			}
		})
	}
}

func TestMntrSummaryPercentiles(t *testing.T) {
	m, err := ParseMntr(fixture(t, "mntr_leader.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := m.Summary(ReadLatency)
	want := Summary{Count: 17, Sum: 34, Avg: 2, Min: 0, Max: 21, HasPercentiles: true, P50: 1, P95: 21, P99: 21, P999: 21}
	if !ok || got != want {
		t.Errorf("Summary(readlatency) = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := m.Summary("no_such_metric"); ok {
		t.Error("Summary(no_such_metric) ok, want missing")
	}
}

func TestMntrAccessors(t *testing.T) {
	m := Mntr{"zk_a": "12", "zk_b": "1.5", "zk_c": "3.0", "zk_d": "x"}
	tests := []struct {
		key     string
		wantInt int64
		intOK   bool
		wantF   float64
		floatOK bool
	}{
		{"zk_a", 12, true, 12, true},
		{"zk_b", 0, false, 1.5, true},
		{"zk_c", 3, true, 3, true},
		{"zk_d", 0, false, 0, false},
		{"zk_missing", 0, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			n, ok := m.Int(tt.key)
			f, fok := m.Float(tt.key)
			if n != tt.wantInt || ok != tt.intOK || f != tt.wantF || fok != tt.floatOK {
				t.Errorf("Int = %d, %v; Float = %v, %v; want %d, %v; %v, %v", n, ok, f, fok, tt.wantInt, tt.intOK, tt.wantF, tt.floatOK)
			}
		})
	}
}

func TestParseMntrErrors(t *testing.T) {
	for _, reply := range []string{"", "zk_version 3.8\n", "zk_znode_count\t5\n"} {
		if _, err := ParseMntr(reply); err == nil {
			t.Errorf("ParseMntr(%q) = nil error", reply)
		}
	}
}

func TestParseCons(t *testing.T) {
	conns, err := ParseCons(fixture(t, "cons_follower.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(conns) != 8 {
		t.Fatalf("%d connections, want 8", len(conns))
	}
	want := Conn{
		Addr: "127.0.0.1:46344", Interest: 1, Queued: 0, Received: 6, Sent: 6,
		HasSession: true, Session: 0x1000001f3b60002, LastOp: "PING",
		Established: time.UnixMilli(1795236727777), Timeout: 4 * time.Second,
		LastCxid: 2, LastZxid: 0x10000001e, LastResponse: 164197,
		LastLatency: 0, MinLatency: 0, AvgLatency: 1, MaxLatency: 5,
	}
	if !reflect.DeepEqual(conns[0], want) {
		t.Errorf("first connection =\n%+v\nwant\n%+v", conns[0], want)
	}
	// Our own cons connection has no session yet.
	own := conns[5]
	if own.HasSession || own.Addr != "127.0.0.1:43828" || own.Received != 1 || own.Interest != 0 {
		t.Errorf("sessionless connection = %+v", own)
	}
	if s := conns[4].Session.String(); s != "0x1000001f3b60000" {
		t.Errorf("Session.String() = %s, want 0x1000001f3b60000", s)
	}
	sessions := 0
	for _, c := range conns {
		if c.HasSession {
			sessions++
		}
	}
	if sessions != 7 {
		t.Errorf("%d connections with a session, want 7", sessions)
	}
}

func TestParseConsLines(t *testing.T) {
	tests := []struct {
		name, line string
		want       Conn
		wantErr    bool
	}{
		{name: "host name prefix", line: " localhost/127.0.0.1:4000[1](queued=2,recved=3,sent=4)", want: Conn{Addr: "127.0.0.1:4000", Interest: 1, Queued: 2, Received: 3, Sent: 4}},
		{name: "ipv6", line: " /0:0:0:0:0:0:0:1:51234[1](queued=0,recved=1,sent=1)", want: Conn{Addr: "[0:0:0:0:0:0:0:1]:51234", Interest: 1, Received: 1, Sent: 1}},
		{name: "no zxid yet", line: " /127.0.0.1:1[1](queued=0,recved=1,sent=1,sid=0x1,lop=NA,est=0,to=4000,lcxid=0xffffffffffffffff,lzxid=0xffffffffffffffff,lresp=0,llat=0,minlat=0,avglat=0,maxlat=0)",
			want: Conn{Addr: "127.0.0.1:1", Interest: 1, Received: 1, Sent: 1, HasSession: true, Session: 1, LastOp: "NA", Established: time.UnixMilli(0), Timeout: 4 * time.Second, LastCxid: -1}},
		{name: "garbage", line: "not a connection", wantErr: true},
		{name: "bad number", line: " /127.0.0.1:1[1](queued=x,recved=1,sent=1)", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCons(tt.line + "\n")
			if tt.wantErr {
				if err == nil {
					t.Errorf("ParseCons(%q) = %+v, want an error", tt.line, got)
				}
				return
			}
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Errorf("ParseCons(%q) = %+v, %v; want %+v", tt.line, got, err, tt.want)
			}
		})
	}
}

func TestParseWchp(t *testing.T) {
	tests := []struct {
		file string
		want WatchesByPath
	}{
		{"wchp_leader.txt", WatchesByPath{
			"/zkherd/herd/lock":                    {0x3000001f3e70002},
			"/zkherd/fair/_c_0f0e-lock-0000000004": {0x3000001f3e70001},
			"/zkherd/fair/_c_0f0e-lock-0000000001": {0x3000001f3e70000},
		}},
		{"wchp_follower.txt", WatchesByPath{
			"/zkherd/herd/lock":                    {0x1000001f3b60004, 0x1000001f3b60005},
			"/zkherd/fair/_c_0f0e-lock-0000000002": {0x1000001f3b60002},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseWchp(fixture(t, tt.file))
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseWchp = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	got, err := ParseWchp(fixture(t, "wchp_standalone.txt"))
	if err != nil || len(got["/zkherd/herd/lock"]) != 5 || len(got) != 6 {
		t.Errorf("standalone: %d paths, %d herd watchers, %v; want 6 paths, 5 herd watchers", len(got), len(got["/zkherd/herd/lock"]), err)
	}
}

func TestParseWchc(t *testing.T) {
	got, err := ParseWchc(fixture(t, "wchc_leader.txt"))
	want := WatchesBySession{
		0x3000001f3e70001: {"/zkherd/fair/_c_0f0e-lock-0000000004"},
		0x3000001f3e70000: {"/zkherd/fair/_c_0f0e-lock-0000000001"},
		0x3000001f3e70002: {"/zkherd/herd/lock"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseWchc = %v, %v; want %v", got, err, want)
	}
}

func TestParseWatchesErrors(t *testing.T) {
	if _, err := ParseWchp("\t0x1\n"); err == nil {
		t.Error("ParseWchp with an item before any path: nil error")
	}
	if _, err := ParseWchp("/a\n\t0xzz\n"); err == nil {
		t.Error("ParseWchp with a bad session id: nil error")
	}
	if _, err := ParseWchc("nonsense\n\t/a\n"); err == nil {
		t.Error("ParseWchc with a bad session id: nil error")
	}
	if got, err := ParseWchp(""); err != nil || len(got) != 0 {
		t.Errorf("ParseWchp(\"\") = %v, %v; want empty", got, err)
	}
}

func TestParseWchs(t *testing.T) {
	tests := []struct {
		file string
		want WatchSummary
	}{
		{"wchs_leader.txt", WatchSummary{Connections: 3, Paths: 3, Watches: 3}},
		{"wchs_follower.txt", WatchSummary{Connections: 3, Paths: 2, Watches: 3}},
	}
	for _, tt := range tests {
		got, err := ParseWchs(fixture(t, tt.file))
		if err != nil || got != tt.want {
			t.Errorf("ParseWchs(%s) = %+v, %v; want %+v", tt.file, got, err, tt.want)
		}
	}
	if _, err := ParseWchs("nothing"); err == nil {
		t.Error("ParseWchs(nothing) = nil error")
	}
}

func TestParseDump(t *testing.T) {
	wantEphemerals := map[SessionID][]string{
		0x2000001f4210000: {"/zkherd/fair/_c_0f0e-lock-0000000001"},
		0x2000001f4210001: {"/zkherd/fair/_c_0f0e-lock-0000000004"},
		0x1000001f3b60003: {"/zkherd/herd/lock"},
		0x1000001f3b60002: {"/zkherd/fair/_c_0f0e-lock-0000000003"},
		0x1000001f3b60001: {"/zkherd/fair/_c_0f0e-lock-0000000000"},
		0x3000001f3e70000: {"/zkherd/fair/_c_0f0e-lock-0000000002"},
		0x3000001f3e70001: {"/zkherd/fair/_c_0f0e-lock-0000000005"},
	}
	t.Run("leader", func(t *testing.T) {
		d, err := ParseDump(fixture(t, "dump_leader.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Sessions) != 16 {
			t.Errorf("%d sessions, want 16", len(d.Sessions))
		}
		wantExpiry := time.Date(2026, 11, 21, 4, 52, 16, 0, time.UTC)
		if s := d.Sessions[0]; s.ID != 0x2000001f4210004 || !s.Expires.Equal(wantExpiry) || s.Timeout != 0 {
			t.Errorf("first session = %+v, want 0x2000001f4210004 expiring %v", s, wantExpiry)
		}
		if !reflect.DeepEqual(d.Ephemerals, wantEphemerals) {
			t.Errorf("Ephemerals = %v, want %v", d.Ephemerals, wantEphemerals)
		}
		wantConns := []DumpConn{
			{"127.0.0.1:53764", 0x3000001f3e70001}, {"127.0.0.1:53782", 0x3000001f3e70003},
			{"127.0.0.1:53756", 0x3000001f3e70000}, {"127.0.0.1:53772", 0x3000001f3e70002},
			{"127.0.0.1:38972", 0},
		}
		if !reflect.DeepEqual(d.Connections, wantConns) {
			t.Errorf("Connections = %v, want %v", d.Connections, wantConns)
		}
		if owner, ok := d.Owner("/zkherd/herd/lock"); !ok || owner != 0x1000001f3b60003 {
			t.Errorf("Owner(/zkherd/herd/lock) = %v, %v", owner, ok)
		}
		if _, ok := d.Owner("/nope"); ok {
			t.Error("Owner(/nope) found")
		}
	})
	t.Run("follower", func(t *testing.T) {
		d, err := ParseDump(fixture(t, "dump_follower.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Sessions) != 16 || d.Sessions[0] != (DumpSession{ID: 0x1000001f3b60000, Timeout: 4 * time.Second}) {
			t.Errorf("sessions: %d, first %+v", len(d.Sessions), d.Sessions[0])
		}
		if !reflect.DeepEqual(d.Ephemerals, wantEphemerals) {
			t.Errorf("Ephemerals = %v, want %v", d.Ephemerals, wantEphemerals)
		}
		if len(d.Connections) != 8 {
			t.Errorf("%d connections, want 8", len(d.Connections))
		}
	})
	t.Run("standalone", func(t *testing.T) {
		d, err := ParseDump(fixture(t, "dump_standalone.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Sessions) != 16 || len(d.Ephemerals) != 7 || len(d.Connections) != 17 {
			t.Errorf("%d sessions, %d with ephemerals, %d connections; want 16, 7, 17", len(d.Sessions), len(d.Ephemerals), len(d.Connections))
		}
	})
	t.Run("garbage", func(t *testing.T) {
		if _, err := ParseDump("hello\n"); err == nil {
			t.Error("ParseDump(hello) = nil error")
		}
	})
}

func TestParseConf(t *testing.T) {
	c, err := ParseConf(fixture(t, "conf_leader.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if c["serverId"] != "3" || c["maxClientCnxns"] != "0" || c["tickTime"] != "500" || c["version"] != "0" {
		t.Errorf("conf = %v", c)
	}
	want := map[string]string{
		"1": "127.0.0.1:57205:58085:participant",
		"2": "127.0.0.1:49027:36677:participant",
		"3": "127.0.0.1:54617:39433:participant",
	}
	if got := c.Servers(); !reflect.DeepEqual(got, want) {
		t.Errorf("Servers() = %v, want %v", got, want)
	}
	s, err := ParseConf(fixture(t, "conf_standalone.txt"))
	if err != nil || s["serverId"] != "0" || len(s.Servers()) != 0 {
		t.Errorf("standalone conf = %v, %v", s, err)
	}
	e, err := ParseEnvi(fixture(t, "envi_leader.txt"))
	if err != nil || e["java.version"] != "17.0.15" || e["zookeeper.version"] != version38 {
		t.Errorf("envi = %v, %v", e, err)
	}
	if _, err := ParseConf("nothing here"); err == nil {
		t.Error("ParseConf(nothing here) = nil error")
	}
}

func TestCheckReply(t *testing.T) {
	tests := []struct {
		name, file, cmd string
		listed          string // the whitelist line the error suggests
		wantReply       bool
		wantWhitelist   bool
		wantNotServing  bool
	}{
		{name: "mntr refused", file: "mntr_not_whitelisted.txt", cmd: "mntr", listed: "srvr, mntr", wantWhitelist: true},
		{name: "cons refused", file: "cons_not_whitelisted.txt", cmd: "cons", listed: "srvr, cons", wantWhitelist: true},
		// A whitelist without srvr: the hint names it once ("srvr, srvr"
		// was printed).
		{name: "srvr refused", file: "srvr_not_whitelisted.txt", cmd: "srvr", listed: "srvr", wantWhitelist: true},
		{name: "not serving", file: "mntr_not_serving.txt", cmd: "mntr", wantNotServing: true},
		{name: "ruok", file: "ruok_leader.txt", cmd: "ruok", wantReply: true},
		{name: "isro", file: "isro_leader.txt", cmd: "isro", wantReply: true},
		// Another command's refusal text is a reply to this one (it cannot
		// happen, but checkReply must not misattribute it).
		{name: "refusal of another command", file: "mntr_not_whitelisted.txt", cmd: "cons", wantReply: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := fixture(t, tt.file)
			got, err := checkReply(reply, tt.cmd, "127.0.0.1:2181")
			var nw *ErrNotWhitelisted
			if errors.As(err, &nw) != tt.wantWhitelist || errors.Is(err, ErrNotServing) != tt.wantNotServing || (got == reply) != tt.wantReply {
				t.Fatalf("checkReply(%q) = %q, %v", reply, got, err)
			}
			if tt.wantWhitelist {
				if nw.Cmd != tt.cmd || nw.Addr != "127.0.0.1:2181" || nw.Fix() != "4lw.commands.whitelist=*" {
					t.Errorf("ErrNotWhitelisted = %+v, Fix %q", nw, nw.Fix())
				}
				want := `fourlw: ` + tt.cmd + ` refused by 127.0.0.1:2181: not in its four-letter-word whitelist; add "4lw.commands.whitelist=*" to zoo.cfg (or list the commands, such as "4lw.commands.whitelist=` + tt.listed + `") and restart the server`
				if err.Error() != want {
					t.Errorf("error text\n%s\nwant\n%s", err, want)
				}
			}
		})
	}
}
