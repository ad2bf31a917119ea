package tui

import (
	"context"
	"path"
	"reflect"
	"strings"
	"testing"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
	"github.com/zkherd/zkherd/tui/keymap"
	"github.com/zkherd/zkherd/tui/styles"
	"github.com/zkherd/zkherd/tui/views/tree"
)

// plainScreen is screen with styles that draw nothing: every escape
// sequence or control character in its frames came from the data.
func plainScreen(t *testing.T, w, h int, msgs ...tea.Msg) Model {
	t.Helper()
	c := common.Common{Width: w, Height: h, Styles: &styles.Styles{}, KeyMap: keymap.DefaultKeyMap()}
	m := newModel(context.Background(), c, nil, inspectViews, feeds{}, "127.0.0.1:2181 · read-only")
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, msg := range msgs {
		tm, _ = tm.Update(msg)
	}
	return tm.(Model)
}

// appendToStrings appends s to every exported string reachable from v.
func appendToStrings(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + s)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			appendToStrings(v.Elem(), s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				appendToStrings(v.Field(i), s)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			appendToStrings(v.Index(i), s)
		}
	}
}

// checkFrame fails when a frame drawn with plainScreen holds a character
// a terminal would act on.
func checkFrame(t *testing.T, what, frame, input string) {
	t.Helper()
	for _, r := range frame {
		if r == '\n' {
			continue
		}
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
			t.Fatalf("%s: frame holds %U from server text %q:\n%q", what, r, input, frame)
		}
	}
}

// serverTextFrames draws every inspector view with s in every string a
// server sends (names, data, ACL schemes and ids, sessions, members,
// four-letter-word and AdminServer answers, notices), each passed through
// the inspector's one exit (inert.All), as inspect does.
func serverTextFrames(t *testing.T, s string) map[string]string {
	snap := tuitest.Cluster(t, "standalone")
	appendToStrings(reflect.ValueOf(snap), s)
	snap.Notices = append(snap.Notices, "member down: "+s)
	inert.All(snap)
	ch := inspect.Children{Path: "/", Names: []string{"n" + s, "m" + s}}
	inert.All(&ch)
	node := inspect.Node{Path: path.Join("/", ch.Names[0]), Data: []byte(s + "\n" + s),
		ACL: []inspect.ACL{{Perms: "r", Scheme: "digest", ID: s}, {Perms: "cdrwa", Scheme: s, ID: "anyone"}}}
	node.Stat.DataLength = int32(len(node.Data))
	inert.All(&node)
	msgs := []tea.Msg{common.SnapshotMsg{Snapshot: snap},
		tree.ChildrenMsg{Path: "/", Children: ch}, tree.NodeMsg{Path: node.Path, Node: node}}
	frames := map[string]string{}
	for i, name := range []string{"tree", "locks", "queues", "sessions", "servers"} {
		m := plainScreen(t, 120, 40, append(msgs, tuitest.Key(string(rune('1'+i))))...)
		frames[name] = m.View().Content
	}
	return frames
}

// FuzzServerText: nothing a server sends reaches the terminal as anything
// but text (issue 26, finding 1).
func FuzzServerText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[8m", "\x1b[31mfake\x1b[0m", "\x1b[2J\x1b[H", "\x9b8m", "\u009b8m",
		"\x1b]8;;http://evil\x07click\x1b]8;;\x07", "\x1b]0;title\x07", "\u202eevil", "\xff\xfe", "a\rb", "\b\b\bX",
		"\x00", "\u2028", "\ufeff", "\x1bP+q\x1b\\", "\x1b[?1049l"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, frame := range serverTextFrames(t, s) {
			checkFrame(t, name, frame, s)
		}
	})
}

// TestPlainStylesDrawNoEscapes: plainScreen's frames hold no escape
// sequence of their own, so FuzzServerText's check means something.
func TestPlainStylesDrawNoEscapes(t *testing.T) {
	for name, frame := range serverTextFrames(t, "") {
		checkFrame(t, name, frame, "")
		if !strings.Contains(frame, "127.0.0.1") {
			t.Errorf("%s: frame lacks the title:\n%s", name, frame)
		}
	}
}
