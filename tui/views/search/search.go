// Package search is the Search view: the whole tree searched by path
// (":find REGEX", zk-shell's find) or by data (":grep REGEX", its grep),
// from the root or from a path given first (":find /app lock-"), with the
// hits listed as they are found and Enter opening one in the Tree. A search
// spends the inspector's tree-walk budget (inspect.Inspector.Search), so
// it reads a large tree slowly, and says how far it has got.
package search

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/components/table"
)

// Source runs searches; *inspect.Inspector is one.
type Source interface {
	Search(ctx context.Context, q inspect.SearchQuery) <-chan inspect.SearchProgress
	// InputName names a value the user gave ("auth") as the command
	// calls it (inspect.Inspector.InputName): the view never names a flag.
	InputName(input string) string
}

// progressMsg is a search's progress; id tells a stale search's apart.
type progressMsg struct {
	id int
	p  inspect.SearchProgress
	ok bool // false: the search's channel closed
}

// Model is the Search view.
type Model struct {
	common.Common
	ctx context.Context
	src Source

	id     int    // the search shown
	what   string // "find" or "grep", and the query as typed
	query  string
	cancel context.CancelFunc
	listen func() tea.Cmd // waits for the next progress of the search shown
	prog   inspect.SearchProgress
	ended  bool
	// stopped: the user stopped the search shown (x, or another search).
	stopped bool
	// selectOn is the hit to put the cursor on when it is found.
	selectOn string
	list     filtertable.Model // of prog.Hits
}

// New returns a Search view running searches on src (nil: none can run).
func New(ctx context.Context, c common.Common, src Source) Model {
	m := Model{Common: c, ctx: ctx, src: src, list: filtertable.New(c)}
	m.layout()
	return m
}

// Title names the view in the tab bar.
func (m Model) Title() string { return "Search" }

var (
	keyOpen = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open in Tree"))
	keyStop = key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "stop"))
	keyFind = key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "find"))
	keyGrep = key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "grep"))
)

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{keyFind, keyGrep, keyOpen, keyStop, m.KeyMap.Filter}
}

// Place is the search shown (a new one is a move) and, to come back to
// it, the search and the hit under the cursor, a line each
// (common.Component).
func (m Model) Place() (location, target string) {
	if m.what == "" {
		return "", ""
	}
	loc := m.what + " " + m.query
	return loc, loc + "\n" + m.selectedPath()
}

// show comes back to a place: the search of target's first line (run
// again if another one is shown: [ from a newer search), the cursor on
// the hit of its second line.
func (m Model) show(target string) (Model, tea.Cmd) {
	search, hit, _ := strings.Cut(target, "\n")
	if search == "" || search == m.what+" "+m.query {
		m.refilter(hit)
		return m, nil
	}
	what, query, _ := strings.Cut(search, " ")
	m, cmd := m.start(what, query)
	m.selectOn = hit
	return m, cmd
}

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
	m.refilter("")
}

func (m *Model) layout() {
	cols := []table.Column{{Title: "path", MinWidth: 20}}
	if m.what == "grep" {
		cols = []table.Column{{Title: "path", MinWidth: 20}, {Title: "matching line", Width: max(m.Width/2, 20)}}
	}
	m.list.SetColumns(cols)
	m.list.SetSize(m.Width, max(m.Height-3, 1))
}

// Update handles the commands, the progress of the search and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.CommandMsg:
		switch msg.Name {
		case "find", "search", "grep":
			return m.start(msg.Name, msg.Arg)
		}
	case progressMsg:
		if msg.id != m.id {
			return m, nil
		}
		if !msg.ok {
			m.ended = true
			return m, nil
		}
		keep := m.selectedPath()
		if m.selectOn != "" {
			keep = m.selectOn
		}
		m.prog = msg.p
		m.ended = m.ended || msg.p.Done
		m.refilter(keep)
		if m.selectedPath() == m.selectOn {
			m.selectOn = ""
		}
		return m, m.listen()
	case common.FilterMsg:
		m.list.SetFilter(msg.Text)
		m.refilter(m.selectedPath())
	case common.ShowMsg:
		return m.show(msg.Target)
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, keyOpen):
			if p := m.selectedPath(); p != "" {
				return m, func() tea.Msg { return common.GotoMsg{View: "tree", Target: p} }
			}
			return m, nil
		case key.Matches(msg, keyStop):
			m.stop()
			return m, nil
		case key.Matches(msg, keyFind, keyGrep):
			name := "find"
			if key.Matches(msg, keyGrep) {
				name = "grep"
			}
			return m, func() tea.Msg {
				return common.PromptMsg{Prompt: name + " [PATH] REGEX: ", Command: name}
			}
		}
		var cmd tea.Cmd
		m.list, cmd = m.list.Update(msg)
		m.selectOn = "" // the user moved
		return m, cmd
	}
	return m, nil
}

// start parses "[PATH] REGEX" and runs the search, stopping the last one.
func (m Model) start(what, arg string) (Model, tea.Cmd) {
	if what == "search" {
		what = "find"
	}
	arg = strings.TrimSpace(arg)
	root, expr := "/", arg
	if first, rest, ok := strings.Cut(arg, " "); ok && strings.HasPrefix(first, "/") {
		root, expr = first, strings.TrimSpace(rest)
	}
	if expr == "" {
		return m, notice(fmt.Sprintf(":%s [PATH] REGEX: give a regular expression, e.g. :%s lock- or :%s /app port", what, what, what), true)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return m, notice(fmt.Sprintf("%s: %q is not a regular expression (%s)", what, expr, strings.TrimPrefix(err.Error(), "error parsing regexp: ")), true)
	}
	if m.src == nil {
		return m, notice("no ensemble to search", true)
	}
	m.stop()
	q := inspect.SearchQuery{Root: root}
	if what == "grep" {
		q.Data = re
	} else {
		q.Name = re
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.id++
	m.what, m.query, m.cancel = what, arg, cancel
	m.prog, m.ended, m.stopped, m.selectOn = inspect.SearchProgress{Query: q}, false, false, ""
	m.list.SetFilter("")
	m.layout()
	m.refilter("")
	ch := m.src.Search(ctx, q)
	m.listen = listener(m.id, ch)
	return m, m.listen()
}

// listener returns the command that waits for a search's next progress.
// It closes over the channel only, never the Model; the channel is closed
// by the search once it ends or its context is cancelled.
func listener(id int, ch <-chan inspect.SearchProgress) func() tea.Cmd {
	return func() tea.Cmd {
		return func() tea.Msg {
			p, ok := <-ch
			return progressMsg{id: id, p: p, ok: ok}
		}
	}
}

// stop cancels the search running, if any; its hits stay listed.
func (m *Model) stop() {
	if m.cancel != nil && !m.ended {
		m.cancel()
		m.ended, m.stopped = true, true
	}
}

func (m Model) selectedPath() string {
	if i, ok := m.list.Selected(); ok && i < len(m.prog.Hits) {
		return m.prog.Hits[i].Path
	}
	return ""
}

// refilter lists the hits that match the filter, the cursor on keep.
func (m *Model) refilter(keep string) {
	hits := m.prog.Hits
	grep := m.what == "grep"
	m.list.Refilter(filtertable.Items{
		N:     len(hits),
		Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(hits[i].Path), f) },
		// The row function closes over the hits, never over the Model.
		Row: func(i int) []string {
			if grep {
				return []string{hits[i].Path, hits[i].Line}
			}
			return []string{hits[i].Path}
		},
	}, func(i int) bool { return hits[i].Path == keep })
}

func notice(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return common.NoticeMsg{Text: text, Error: isErr} }
}

// View draws the view, exactly Height lines.
func (m Model) View() string {
	s := m.Styles
	if m.what == "" {
		help := []string{
			s.Title.Render("Search") + "  the whole tree, by path or by data",
			"",
			"  :find [PATH] REGEX   nodes whose path matches (zk-shell's find), e.g. :find lock-  :find /app port$",
			"  :grep [PATH] REGEX   nodes whose data matches (zk-shell's grep), e.g. :grep 5432",
			"  f, g                 the same, from this view",
			"",
			s.Dim.Render("  A search reads every node under PATH at the pace of the inspector's tree walk"),
			s.Dim.Render("  (50 requests a second, shared with it): a large tree takes minutes, so give a PATH."),
		}
		return common.Lines(strings.Join(help, "\n"), m.Width, m.Height)
	}
	p := m.prog
	state := s.Warn.Render("searching… (x stops)")
	switch {
	case m.stopped:
		state = s.Dim.Render("stopped")
	case p.Err != nil:
		state = s.Bad.Render("stopped: " + p.Err.Error())
	case p.Truncated:
		state = s.Warn.Render(fmt.Sprintf("stopped at %s hits: narrow the search", common.Count(int64(len(p.Hits)))))
	case m.ended:
		state = s.Dim.Render("done")
	}
	head := fmt.Sprintf("%s %s · %s · %s · %s read", m.what, m.query, state,
		common.Plural(len(p.Hits), "hit", "hits"), common.Plural(p.Visited, "node", "nodes"))
	if p.Unreadable > 0 {
		var name func(string) string
		if m.src != nil {
			name = m.src.InputName
		}
		head += " · " + s.Warn.Render(exit.Advice(name, "%d not readable (ACL; see {auth})", p.Unreadable))
	}
	lines := []string{
		m.list.Heading("Search", head),
		m.list.View(),
	}
	if len(p.Hits) == 0 && m.ended {
		lines = append(lines, s.Dim.Render("nothing found"))
	}
	return common.Lines(strings.Join(lines, "\n"), m.Width, m.Height)
}
