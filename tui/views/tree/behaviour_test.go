package tree

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

func listed(t *testing.T, dir string, names ...string) Model {
	t.Helper()
	m := New(context.Background(), common.New(80, 24), nil)
	m.SetSize(80, 24)
	m.cd(dir, "")
	m, _ = m.Update(ChildrenMsg{Path: dir, Children: inspect.Children{Path: dir, Names: names}})
	return m
}

// TestFilterClearedKeepsCursor: Esc after a filter leaves the cursor on the
// node it was on.
func TestFilterClearedKeepsCursor(t *testing.T) {
	var names []string
	for c := 'a'; c <= 'z'; c++ {
		names = append(names, "node-"+string(c))
	}
	m := listed(t, "/app", names...)
	m, _ = m.Update(common.FilterMsg{Text: "node-q"})
	if got, _ := m.selectedName(); got != "node-q" {
		t.Fatalf("filtered cursor on %q, want node-q", got)
	}
	m, _ = m.Update(common.FilterMsg{Text: ""})
	if got, _ := m.selectedName(); got != "node-q" {
		t.Errorf("after clearing the filter the cursor is on %q, want node-q", got)
	}
}

// TestMissingNodes: a path that never existed says so; a directory seen
// then deleted is "gone".
func TestMissingNodes(t *testing.T) {
	m := listed(t, "/")
	m, _ = m.command("cd", "/nonexistent")
	m, _ = m.Update(ChildrenMsg{Path: "/nonexistent", Err: fmt.Errorf("inspect: list /nonexistent: %w", zk.ErrNoNode)})
	if want := "no such node: /nonexistent"; m.listErr != want {
		t.Errorf("cd to a path that never existed: %q, want %q", m.listErr, want)
	}
	m = listed(t, "/app", "a")
	m, _ = m.Update(ChildrenMsg{Path: "/app", Err: fmt.Errorf("inspect: list /app: %w", zk.ErrNoNode)})
	if want := "gone: /app was deleted"; m.listErr != want {
		t.Errorf("refresh of a deleted directory: %q, want %q", m.listErr, want)
	}
}

// TestLeafShowsItsData: entering a node without children shows the node
// itself, as zkCli's get does.
func TestLeafShowsItsData(t *testing.T) {
	m := listed(t, "/x/config.json")
	if m.nodePath != "/x/config.json" {
		t.Fatalf("node shown = %q, want the leaf itself", m.nodePath)
	}
	m, _ = m.Update(NodeMsg{Path: "/x/config.json", Node: node("/x/config.json", []byte(`{"a":1}`), 0)})
	if v := tuitest.Plain(m.View()); !strings.Contains(v, `"a": 1`) || strings.Contains(v, "no node selected") {
		t.Errorf("leaf view lacks its data:\n%s", v)
	}
}

// TestLargeNodeWhole: every byte of a 1 MB node can be paged to, 16 bytes a
// hex line even in a 71-column pane.
func TestLargeNodeWhole(t *testing.T) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	for _, width := range []int{71, 120} {
		m := New(context.Background(), common.New(width, 40), nil)
		m.SetSize(width, 40)
		m.cd("/big", "")
		m, _ = m.Update(ChildrenMsg{Path: "/big", Children: inspect.Children{Path: "/big"}})
		m, _ = m.Update(NodeMsg{Path: "/big", Node: node("/big", data, 0)})
		if got, want := len(m.dataLines), 1<<20/16; got != want {
			t.Errorf("width %d: %d data lines, want %d (16 bytes each)", width, got, want)
		}
		m, _ = m.Update(tuitest.Key("G")) // no children: keys page the data
		v := tuitest.Plain(m.View())
		if !strings.Contains(v, "000ffff0") {
			t.Errorf("width %d: the end of the node (offset 000ffff0) is not reachable:\n%s", width, v)
		}
		if strings.Contains(v, "first") {
			t.Errorf("width %d: the node is cut:\n%s", width, v)
		}
	}
}

// TestControlCharactersShown: a tab shows as ␉, not as nothing.
func TestControlCharactersShown(t *testing.T) {
	n := node("/t", []byte("first line\nsecond\tline\r"), 0)
	lines := buildDataLines(&n, inspect.Decode(n.Data, 0, 0), 80)
	if got := strings.Join(lines, "\n"); !strings.Contains(got, "second␉line␍") {
		t.Errorf("lines = %q, want the tab and carriage return visible", got)
	}
}

// TestEditorNewline: the newline an editor adds at the end is dropped when
// the data had none; one the user typed (an empty last line) is kept.
func TestEditorNewline(t *testing.T) {
	tests := []struct {
		before, after, want string
		dropped             bool
	}{
		{"5432", "5432\n", "5432", true},
		{"5432", "5433\n", "5433", true},
		{"5432", "5433\n\n", "5433\n", true},
		{"a\n", "b\n", "b\n", false},
		{"5432", "5433", "5433", false},
	}
	for _, tc := range tests {
		got, dropped := editorNewline([]byte(tc.before), []byte(tc.after))
		if string(got) != tc.want || dropped != tc.dropped {
			t.Errorf("editorNewline(%q, %q) = %q, %v; want %q, %v", tc.before, tc.after, got, dropped, tc.want, tc.dropped)
		}
	}
}

// TestPlaceComesBack: what Place returns brings the Tree back to the same
// directory and node through ShowMsg: a child under the cursor, or a
// directory with nothing under the cursor (a leaf entered).
func TestPlaceComesBack(t *testing.T) {
	m := listed(t, "/app", "a", "b")
	m, _ = m.Update(tuitest.Key("j"))
	loc, target := m.Place()
	if loc != "/app" || target != "/app/b" {
		t.Fatalf("Place = %q, %q; want /app, /app/b", loc, target)
	}
	leaf := listed(t, "/app/b")
	_, leafTarget := leaf.Place()
	for _, tc := range []struct {
		target, dir, node string
	}{
		{target, "/app", "b"},
		{leafTarget, "/app/b", ""},
		{"/", "/", ""},
	} {
		m := listed(t, "/elsewhere", "x")
		m, _ = m.Update(common.ShowMsg{Target: tc.target})
		if m.dir != tc.dir || m.selectOn != tc.node {
			t.Errorf("ShowMsg{%q}: dir %q, selecting %q; want %q, %q", tc.target, m.dir, m.selectOn, tc.dir, tc.node)
		}
	}
}
