package tree

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

var t0 = time.Date(2026, 11, 21, 4, 52, 13, 0, time.UTC)

func stat(size, children int, owner int64) inspect.Stat {
	return inspect.Stat{Czxid: 0x20, Mzxid: 0x21, Pzxid: 0x22, Ctime: t0, Mtime: t0.Add(time.Second),
		Version: 3, DataLength: int32(size), NumChildren: int32(children), EphemeralOwner: owner}
}

func node(path string, data []byte, owner int64) inspect.Node {
	return inspect.Node{Path: path, Stat: stat(len(data), 0, owner), Data: data,
		ACL: []inspect.ACL{{Perms: "cdrwa", Scheme: "world", ID: "anyone"}}}
}

// binary is 300 deterministic bytes that are not text.
func binary() []byte {
	b := make([]byte, 300)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func TestView(t *testing.T) {
	dataDir := []string{"binary", "ephemeral", "json", "large", "secret", "text"}
	nodes := map[string]inspect.Node{
		"binary":    node("/app/data/binary", binary(), 0),
		"ephemeral": node("/app/data/ephemeral", []byte("owner"), 0x1000001f3b60001),
		"json":      node("/app/data/json", []byte(`{"a":1,"b":[1,2,3],"c":{"d":"e"}}`), 0),
		"large":     node("/app/data/large", []byte(strings.Repeat("0123456789abcdef", 65000)), 0),
		"secret":    {Path: "/app/data/secret", Stat: stat(10, 0, 0), NoAccess: true, ACLErr: "no access"},
		"text":      node("/app/data/text", []byte("hello world\nsecond line"), 0),
	}
	many := make([]string, 100000)
	for i := range many {
		many[i] = fmt.Sprintf("child-%06d", i)
	}
	tests := []struct {
		name    string
		dir     string
		names   []string
		listErr error
		keys    []string
		filter  string
		show    string // child whose node read arrives
	}{
		{name: "json", dir: "/app/data", names: dataDir, keys: []string{"j", "j"}, show: "json"},
		{name: "binary", dir: "/app/data", names: dataDir, show: "binary"},
		{name: "large_text", dir: "/app/data", names: dataDir, keys: []string{"j", "j", "j"}, show: "large"},
		{name: "no_access", dir: "/app/data", names: dataDir, keys: []string{"j", "j", "j", "j"}, show: "secret"},
		{name: "ephemeral_owner", dir: "/app/data", names: dataDir, keys: []string{"j"}, show: "ephemeral"},
		{name: "list_denied", dir: "/app/secret", listErr: fmt.Errorf("inspect: list /app/secret: %w", inspect.ErrNoAccess)},
		{name: "many_children_bottom", dir: "/app/many", names: many, keys: []string{"G"}},
		{name: "many_children_filter", dir: "/app/many", names: many, filter: "09999"},
	}
	snap := tuitest.Cluster(t, "standalone")
	snap.Cluster.Sessions = append(snap.Cluster.Sessions, inspect.Session{ID: 0x1000001f3b60001, Endpoint: "127.0.0.1:53764", Member: "127.0.0.1:2181"})
	for _, tt := range tests {
		for _, sz := range tuitest.Sizes {
			t.Run(tt.name+"_"+sz.Name, func(t *testing.T) {
				// As zkherd inspect shows it: the source's command names
				// the inputs ("see --auth"); no command is run here.
				m := New(context.Background(), common.New(sz.Width, sz.Height), readOnly{})
				m.SetSize(sz.Width, sz.Height)
				m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
				m.dir = tt.dir
				m, _ = m.Update(ChildrenMsg{Path: tt.dir, Children: inspect.Children{Path: tt.dir, Names: tt.names}, Err: tt.listErr})
				for _, k := range tt.keys {
					m, _ = m.Update(tuitest.Key(k))
				}
				if tt.filter != "" {
					m, _ = m.Update(common.FilterMsg{Text: tt.filter})
				}
				if tt.show != "" {
					m, _ = m.Update(NodeMsg{Path: tt.dir + "/" + tt.show, Node: nodes[tt.show]})
				}
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

// TestStaleReplyIgnored: a node read that arrives after the cursor moved on
// does not replace what is shown.
func TestStaleReplyIgnored(t *testing.T) {
	m := New(context.Background(), common.New(80, 24), nil)
	m, _ = m.Update(ChildrenMsg{Path: "/", Children: inspect.Children{Path: "/", Names: []string{"a", "b"}}})
	m, _ = m.Update(tuitest.Key("j")) // on /b now
	m, _ = m.Update(NodeMsg{Path: "/a", Node: node("/a", []byte("from a"), 0)})
	if got := tuitest.Plain(m.View()); strings.Contains(got, "from a") {
		t.Errorf("stale read of /a shown while the cursor is on /b:\n%s", got)
	}
	m, _ = m.Update(NodeMsg{Path: "/b", Node: node("/b", []byte("from b"), 0)})
	if got := tuitest.Plain(m.View()); !strings.Contains(got, "from b") {
		t.Errorf("read of /b not shown:\n%s", got)
	}
}

// readOnly is a source that refuses writes and names the inputs as a
// command line does; nothing else of it is called (the embedded Source
// is nil).
type readOnly struct{ Source }

func (readOnly) Writable() bool                { return false }
func (readOnly) InputName(input string) string { return "--" + input }

// TestWritesRefusedReadOnly: delete and set-data say how to enable them,
// naming the setting as the source's command does (never a flag of the
// view's own), bare without a source.
func TestWritesRefusedReadOnly(t *testing.T) {
	for _, tt := range []struct {
		src  Source
		want string
	}{{readOnly{}, "start zkherd inspect with --allow-writes"}, {nil, "start zkherd inspect with allow-writes"}} {
		m := New(context.Background(), common.New(80, 24), tt.src)
		m, _ = m.Update(ChildrenMsg{Path: "/", Children: inspect.Children{Path: "/", Names: []string{"a"}}})
		for _, k := range []string{"d", "e"} {
			_, cmd := m.Update(tuitest.Key(k))
			if cmd == nil {
				t.Fatalf("%s: no command", k)
			}
			msg, ok := cmd().(common.NoticeMsg)
			if !ok || !strings.Contains(msg.Text, tt.want) {
				t.Errorf("%s: got %#v, want a notice saying %q", k, msg, tt.want)
			}
		}
	}
}

func TestSortChildren(t *testing.T) {
	names := []string{
		"_c_ffffffff-0000-4000-8000-000000000000-lock-0000000002",
		"config",
		"_c_00000000-0000-4000-8000-000000000000-lock-0000000010",
		"qn-0000000001",
		"alpha",
	}
	sortChildren(names)
	want := []string{"alpha", "config", "qn-0000000001",
		"_c_ffffffff-0000-4000-8000-000000000000-lock-0000000002",
		"_c_00000000-0000-4000-8000-000000000000-lock-0000000010"}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("sorted = %q, want %q", names, want)
		}
	}
}

func BenchmarkSortChildren(b *testing.B) {
	names := make([]string, 100000)
	for b.Loop() {
		for i := range names {
			names[i] = fmt.Sprintf("_c_%08x-0000-4000-8000-000000000000-lock-%010d", (i*7919)%100000, i)
		}
		sortChildren(names)
	}
}
