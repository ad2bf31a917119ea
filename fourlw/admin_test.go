package fourlw

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func decodeFixture(t *testing.T, name string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(fixture(t, name)), v); err != nil {
		t.Fatal(err)
	}
}

func TestAdminCommandURL(t *testing.T) {
	tests := []struct{ base, want string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/commands/monitor"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/commands/monitor"},
		{"http://127.0.0.1:8080/commands", "http://127.0.0.1:8080/commands/monitor"},
		{"http://127.0.0.1:8080/commands/", "http://127.0.0.1:8080/commands/monitor"},
	}
	for _, tt := range tests {
		if got := (Admin{URL: tt.base}).commandURL("monitor"); got != tt.want {
			t.Errorf("commandURL(%q) = %q, want %q", tt.base, got, tt.want)
		}
	}
}

func TestAdminMonitorFixture(t *testing.T) {
	var raw map[string]json.RawMessage
	decodeFixture(t, "admin_monitor_leader.json", &raw)
	m, err := monitorToMntr(raw)
	if err != nil {
		t.Fatal(err)
	}
	text, err := ParseMntr(fixture(t, "mntr_leader.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The same keys as mntr, with the same names.
	if len(m) != len(text) {
		t.Errorf("monitor has %d keys, mntr %d", len(m), len(text))
	}
	for k := range text {
		if _, ok := m[k]; !ok {
			t.Errorf("monitor lacks mntr's %s", k)
		}
	}
	if m.ServerState() != ModeLeader || m.Version() != version38 || m.ZnodeCount() != 17 {
		t.Errorf("state %q version %q znodes %d", m.ServerState(), m.Version(), m.ZnodeCount())
	}
	if _, ok := m.Summary(NodeDeletedWatchCount); !ok {
		t.Error("no node_deleted_watch_count summary")
	}
	if f, ok := m.Float("zk_avg_readlatency"); !ok || f != 0.3333 {
		t.Errorf("zk_avg_readlatency = %v, %v; want 0.3333", f, ok)
	}
}

func TestAdminConnectionsFixture(t *testing.T) {
	var r connectionsReply
	decodeFixture(t, "admin_connections_leader.json", &r)
	conns := r.conns()
	if len(conns) != 4 {
		t.Fatalf("%d connections, want 4", len(conns))
	}
	want := Conn{
		Addr: "127.0.0.1:53772", Interest: 1, Received: 3, Sent: 3,
		HasSession: true, Session: 216172790500753410, LastOp: "PING",
		Established: time.UnixMilli(1795236727891), Timeout: 4 * time.Second,
		LastCxid: -1, LastZxid: 4294967326, LastResponse: 168311, MaxLatency: 1,
	}
	if !reflect.DeepEqual(conns[0], want) {
		t.Errorf("first connection =\n%+v\nwant\n%+v", conns[0], want)
	}
	// The same session cons shows in hex.
	if got := conns[0].Session.String(); got != "0x3000001f3e70002" {
		t.Errorf("session %s, want 0x3000001f3e70002", got)
	}
}

func TestAdminWatchesFixtures(t *testing.T) {
	var byPath watchesByPathReply
	decodeFixture(t, "admin_watches_by_path_follower.json", &byPath)
	wantPath := WatchesByPath{
		"/zkherd/herd/lock":                    {72057602421686277, 72057602421686276},
		"/zkherd/fair/_c_0f0e-lock-0000000002": {72057602421686274},
	}
	if got := byPath.watches(); !reflect.DeepEqual(got, wantPath) {
		t.Errorf("watches_by_path = %v, want %v", got, wantPath)
	}
	var bySession watchesReply
	decodeFixture(t, "admin_watches_follower.json", &bySession)
	got, err := bySession.watches()
	wantSession := WatchesBySession{
		0x1000001f3b60005: {"/zkherd/herd/lock"},
		0x1000001f3b60004: {"/zkherd/herd/lock"},
		0x1000001f3b60002: {"/zkherd/fair/_c_0f0e-lock-0000000002"},
	}
	if err != nil || !reflect.DeepEqual(got, wantSession) {
		t.Errorf("watches = %v, %v; want %v", got, err, wantSession)
	}
}

func TestAdminDumpFixture(t *testing.T) {
	var r dumpReply
	decodeFixture(t, "admin_dump_leader.json", &r)
	d, err := r.dump()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Sessions) != 16 || len(d.Ephemerals) != 7 {
		t.Errorf("%d sessions, %d with ephemerals; want 16, 7", len(d.Sessions), len(d.Ephemerals))
	}
	if owner, ok := d.Owner("/zkherd/herd/lock"); !ok || owner.String() != "0x1000001f3b60003" {
		t.Errorf("Owner(herd lock) = %v, %v; want 0x1000001f3b60003 (as the 4lw dump says)", owner, ok)
	}
	text, err := ParseDump(fixture(t, "dump_leader.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Ephemerals, text.Ephemerals) {
		t.Errorf("AdminServer ephemerals %v differ from dump's %v", d.Ephemerals, text.Ephemerals)
	}
}

func TestAdminStatsFixture(t *testing.T) {
	var r statsReply
	decodeFixture(t, "admin_stats_leader.json", &r)
	st, err := r.stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode != ModeLeader || st.Version != version38 || st.NodeCount != 17 || st.Zxid != 0x10000001e || st.Connections != 4 || len(st.Clients) != 4 {
		t.Errorf("stats = %+v", st)
	}
}
