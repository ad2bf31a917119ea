// Package bookmarks is the Bookmarks view: the paths bookmarked in the Tree
// (b), kept in the user's configuration directory from one session to the
// next (tui/bookmarks). Enter opens one in the Tree, x removes it.
package bookmarks

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/tui/bookmarks"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/components/table"
)

// Model is the Bookmarks view.
type Model struct {
	common.Common
	store *bookmarks.Store // nil: no bookmarks in this screen
	paths []string
	list  filtertable.Model // of paths
}

var (
	keyOpen   = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open in Tree"))
	keyRemove = key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "remove"))
)

// New returns the Bookmarks view of store.
func New(c common.Common, store *bookmarks.Store) Model {
	m := Model{Common: c, store: store, list: filtertable.New(c)}
	m.list.SetColumns([]table.Column{{Title: "path", MinWidth: 10}})
	m.reload("")
	return m
}

// Title names the view in the tab bar.
func (m Model) Title() string { return "Bookmarks" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{keyOpen, keyRemove, m.KeyMap.Filter}
}

// Place is the bookmark under the cursor (common.Component).
func (m Model) Place() (location, target string) { return "", m.selected() }

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.list.SetSize(width, max(height-2, 1))
}

// Update handles changes to the bookmarks, the filter and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.BookmarksMsg:
		m.reload(m.selected())
	case common.ShowMsg:
		m.reload(msg.Target)
	case common.FilterMsg:
		m.list.SetFilter(msg.Text)
		m.reload(m.selected())
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, keyOpen):
			if p := m.selected(); p != "" {
				return m, func() tea.Msg { return common.GotoMsg{View: "tree", Target: p} }
			}
			return m, nil
		case key.Matches(msg, keyRemove):
			p := m.selected()
			if p == "" || m.store == nil {
				return m, nil
			}
			_, err := m.store.Toggle(p)
			m.reload("")
			text, isErr := "removed the bookmark of "+p, false
			if err != nil {
				text, isErr = text+" for this session only: "+err.Error(), true
			}
			return m, func() tea.Msg { return common.NoticeMsg{Text: text, Error: isErr} }
		}
		var cmd tea.Cmd
		m.list, cmd = m.list.Update(msg)
		return m, cmd
	}
	return m, nil
}

func (m Model) selected() string {
	if i, ok := m.list.Selected(); ok && i < len(m.paths) {
		return m.paths[i]
	}
	return ""
}

// reload lists the store's bookmarks, the cursor on keep.
func (m *Model) reload(keep string) {
	m.paths = nil
	if m.store != nil {
		m.paths = m.store.Paths()
	}
	paths := m.paths
	m.list.Refilter(filtertable.Items{
		N:     len(paths),
		Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(paths[i]), f) },
		Row:   func(i int) []string { return []string{paths[i]} },
	}, func(i int) bool { return paths[i] == keep })
}

// View draws the view, exactly Height lines.
func (m Model) View() string {
	s := m.Styles
	where := "nowhere (no configuration directory): they last until exit"
	if m.store != nil && m.store.File() != "" {
		where = m.store.File()
	}
	lines := []string{m.list.Heading("Bookmarks", common.Plural(len(m.paths), "bookmark", "bookmarks")+" · kept in "+where)}
	if m.store != nil && m.store.Err() != nil {
		lines = append(lines, s.Bad.Render(m.store.Err().Error()))
	}
	if len(m.paths) == 0 {
		lines = append(lines, s.Dim.Render("no bookmarks: b in the Tree bookmarks the node under the cursor (b again removes it)"))
	} else {
		lines = append(lines, m.list.View())
	}
	return common.Lines(strings.Join(lines, "\n"), m.Width, m.Height)
}
