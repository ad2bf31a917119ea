package search

import (
	"context"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

// TestView: the help before any search, a grep in progress, and a find
// stopped at its limit. (Hits come inert from the inspector: TestSearch.)
func TestView(t *testing.T) {
	grep := inspect.SearchProgress{
		Query: inspect.SearchQuery{Root: "/", Data: regexp.MustCompile("5432")},
		Hits: []inspect.SearchHit{
			{Path: "/app/db/port", Line: "5432"},
			{Path: "/app/web/db-url", Line: "postgres://db1:5432/x"},
			{Path: "/evil", Line: "5432␛[8m hidden"},
		},
		Visited: 1234, Units: 1300, Unreadable: 2,
	}
	find := inspect.SearchProgress{
		Query:   inspect.SearchQuery{Root: "/app", Name: regexp.MustCompile("lock-")},
		Hits:    []inspect.SearchHit{{Path: "/app/locks/a/lock-0000000001"}, {Path: "/app/locks/a/lock-0000000002"}},
		Visited: 40, Done: true, Truncated: true,
	}
	tests := []struct {
		name string
		what string
		arg  string
		p    *inspect.SearchProgress
	}{
		{name: "help"},
		{name: "grep_running", what: "grep", arg: "5432", p: &grep},
		{name: "find_truncated", what: "find", arg: "/app lock-", p: &find},
	}
	for _, tc := range tests {
		for _, sz := range tuitest.Sizes {
			t.Run(tc.name+"_"+sz.Name, func(t *testing.T) {
				// As zkherd inspect shows it: the source's command names
				// the inputs ("see --auth"); no search is run here.
				m := New(context.Background(), common.New(sz.Width, sz.Height), flagNamed{})
				m.SetSize(sz.Width, sz.Height)
				if tc.p != nil {
					m.what, m.query = tc.what, tc.arg
					m.layout()
					m.listen = func() tea.Cmd { return nil }
					m, _ = m.Update(progressMsg{id: m.id, p: *tc.p, ok: true})
				}
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

// flagNamed is a source naming the inputs as a command line does; its
// searches are never run (the embedded Source is nil).
type flagNamed struct{ Source }

func (flagNamed) InputName(input string) string { return "--" + input }

// TestBadQuery: a regular expression that does not compile is named, and
// nothing runs.
func TestBadQuery(t *testing.T) {
	m := New(context.Background(), common.New(80, 24), nil)
	m, cmd := m.Update(common.CommandMsg{Name: "grep", Arg: "/app a(b"})
	msg := cmd()
	n, ok := msg.(common.NoticeMsg)
	if !ok || !n.Error || !strings.Contains(n.Text, `"a(b" is not a regular expression`) {
		t.Errorf("notice = %#v, want the expression named", msg)
	}
	if m.what != "" {
		t.Errorf("a search started: %q", m.what)
	}
}

// TestStopStaysStopped: x stops the search, and a progress already on its
// way does not make it say "searching…" again.
func TestStopStaysStopped(t *testing.T) {
	m := New(context.Background(), common.New(80, 24), nil)
	m.what, m.query, m.cancel = "find", "x", func() {}
	m.listen = func() tea.Cmd { return nil }
	m, _ = m.Update(progressMsg{id: m.id, p: inspect.SearchProgress{Visited: 10}, ok: true})
	m, _ = m.Update(tuitest.Key("x"))
	m, _ = m.Update(progressMsg{id: m.id, p: inspect.SearchProgress{Visited: 42}, ok: true})
	if v := tuitest.Plain(m.View()); !strings.Contains(v, "find x · stopped") {
		t.Errorf("after x the view says:\n%s", v)
	}
}
