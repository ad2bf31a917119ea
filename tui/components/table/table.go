// Package table is a scrollable table whose rows are formatted on demand:
// only the rows on screen are ever turned into text, so a table of 100,000
// rows costs the same to draw as one of 20.
package table

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/zkherd/zkherd/tui/common"
)

// Column is one column. Width 0 makes it flexible: flexible columns share
// the width the fixed ones leave, at least MinWidth each.
type Column struct {
	Title    string
	Width    int
	MinWidth int
	Right    bool // align right (numbers)
}

// RowFunc returns the cells of row i. Cells may hold ANSI styles.
type RowFunc func(i int) []string

// Model is a table. The zero value is empty; use New.
type Model struct {
	common.Common
	cols    []Column
	widths  []int
	n       int
	row     RowFunc
	cursor  int
	offset  int
	focused bool
	header  bool
}

// New returns an empty focused table with a header line.
func New(c common.Common, cols []Column) Model {
	m := Model{Common: c, cols: cols, focused: true, header: true}
	m.layout()
	return m
}

// SetColumns replaces the columns.
func (m *Model) SetColumns(cols []Column) {
	m.cols = cols
	m.layout()
}

// SetHeader turns the header line on or off.
func (m *Model) SetHeader(on bool) { m.header = on }

// SetRows sets the number of rows and how to format them. The cursor is kept
// on the same index, clamped to the new length.
func (m *Model) SetRows(n int, row RowFunc) {
	m.n, m.row = n, row
	m.clamp()
}

// SetSize sets the table's size, header included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
	m.clamp()
}

// Focus and Blur change how the cursor row is drawn.
func (m *Model) Focus()          { m.focused = true }
func (m *Model) Blur()           { m.focused = false }
func (m Model) Focused() bool    { return m.focused }
func (m Model) Len() int         { return m.n }
func (m Model) Cursor() int      { return m.cursor }
func (m Model) Offset() int      { return m.offset }
func (m *Model) SetCursor(i int) { m.cursor = i; m.clamp() }

// bodyHeight is the number of rows shown.
func (m Model) bodyHeight() int {
	h := m.Height
	if m.header {
		h--
	}
	return max(h, 0)
}

func (m *Model) clamp() {
	m.cursor = min(max(m.cursor, 0), max(m.n-1, 0))
	h := max(m.bodyHeight(), 1)
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = min(max(m.offset, 0), max(m.n-h, 0))
}

func (m *Model) layout() {
	m.widths = make([]int, len(m.cols))
	fixed, flex := 0, 0
	for i, c := range m.cols {
		if c.Width > 0 {
			m.widths[i] = c.Width
			fixed += c.Width
		} else {
			flex++
		}
		if i > 0 {
			fixed++ // separator
		}
	}
	if flex == 0 {
		return
	}
	left := max(m.Width-fixed, 0)
	for i, c := range m.cols {
		if c.Width > 0 {
			continue
		}
		w := left / flex
		left -= w
		flex--
		m.widths[i] = max(w, c.MinWidth)
	}
}

// Update moves the cursor on navigation keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !m.focused {
		return m, nil
	}
	km := m.KeyMap
	page := max(m.bodyHeight()-1, 1)
	switch {
	case key.Matches(k, km.Up):
		m.cursor--
	case key.Matches(k, km.Down):
		m.cursor++
	case key.Matches(k, km.PageUp):
		m.cursor -= page
	case key.Matches(k, km.PageDown):
		m.cursor += page
	case key.Matches(k, km.Top):
		m.cursor = 0
	case key.Matches(k, km.Bottom):
		m.cursor = m.n - 1
	default:
		return m, nil
	}
	m.clamp()
	return m, nil
}

// View draws the header and the visible rows, exactly Height lines of
// Width cells.
func (m Model) View() string {
	lines := make([]string, 0, m.Height)
	if m.header && m.Height > 0 {
		titles := make([]string, len(m.cols))
		for i, c := range m.cols {
			titles[i] = c.Title
		}
		lines = append(lines, m.Styles.Header.Render(m.line(titles)))
	}
	end := min(m.offset+m.bodyHeight(), m.n)
	for i := m.offset; i < end; i++ {
		text := m.line(m.row(i))
		if i == m.cursor {
			style := m.Styles.SelectedDim
			if m.focused {
				style = m.Styles.Selected
			}
			text = style.Render(ansi.Strip(text))
		}
		lines = append(lines, text)
	}
	blank := strings.Repeat(" ", m.Width)
	for len(lines) < m.Height {
		lines = append(lines, blank)
	}
	return strings.Join(lines, "\n")
}

// line fits cells into the columns and the line into the width.
func (m Model) line(cells []string) string {
	var b strings.Builder
	for i, w := range m.widths {
		if i > 0 {
			b.WriteByte(' ')
		}
		var cell string
		if i < len(cells) {
			cell = cells[i]
		}
		if m.cols[i].Right {
			b.WriteString(common.FitRight(cell, w))
		} else {
			b.WriteString(common.Fit(cell, w))
		}
	}
	return common.Fit(b.String(), m.Width)
}
