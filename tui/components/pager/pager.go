// Package pager scrolls a block of text lines with the shared key bindings.
// Only the visible lines are fitted to the width when drawn.
package pager

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/tui/common"
)

// Model is a scrollable text block.
type Model struct {
	common.Common
	lines   []string
	offset  int
	focused bool
}

// New returns an empty pager.
func New(c common.Common) Model { return Model{Common: c} }

// SetLines replaces the text, keeping the scroll position where possible.
func (m *Model) SetLines(lines []string) {
	m.lines = lines
	m.clamp()
}

// SetText splits s into lines.
func (m *Model) SetText(s string) { m.SetLines(strings.Split(s, "\n")) }

// SetSize sets the pager's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.clamp()
}

// GotoTop scrolls to the first line.
func (m *Model) GotoTop() { m.offset = 0 }

// Focus and Blur decide whether keys scroll the pager.
func (m *Model) Focus()        { m.focused = true }
func (m *Model) Blur()         { m.focused = false }
func (m Model) Focused() bool  { return m.focused }
func (m Model) Offset() int    { return m.offset }
func (m Model) LineCount() int { return len(m.lines) }

func (m *Model) clamp() {
	m.offset = min(max(m.offset, 0), max(len(m.lines)-m.Height, 0))
}

// Update scrolls on navigation keys when focused.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !m.focused {
		return m, nil
	}
	km := m.KeyMap
	page := max(m.Height-1, 1)
	switch {
	case key.Matches(k, km.Up):
		m.offset--
	case key.Matches(k, km.Down):
		m.offset++
	case key.Matches(k, km.PageUp):
		m.offset -= page
	case key.Matches(k, km.PageDown):
		m.offset += page
	case key.Matches(k, km.Top):
		m.offset = 0
	case key.Matches(k, km.Bottom):
		m.offset = len(m.lines)
	}
	m.clamp()
	return m, nil
}

// View draws exactly Height lines of Width cells.
func (m Model) View() string {
	out := make([]string, 0, m.Height)
	for i := m.offset; i < len(m.lines) && len(out) < m.Height; i++ {
		out = append(out, common.Fit(m.lines[i], m.Width))
	}
	blank := strings.Repeat(" ", m.Width)
	for len(out) < m.Height {
		out = append(out, blank)
	}
	return strings.Join(out, "\n")
}
