// Package filtertable is the skeleton the list views share: a table of the
// items of a snapshot that match the view's filter ("/"), the cursor kept on
// the same item when the items or the filter change, and the view's title
// line saying how many are shown.
package filtertable

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/table"
)

// Model is a filtered table. Rows are formatted on demand, as in table.
type Model struct {
	table.Model
	filter string
	n      int   // the items
	shown  []int // the items shown, in order; nil when not filtered
}

// New returns an empty filtered table.
func New(c common.Common) Model { return Model{Model: table.New(c, nil)} }

// Filter is the filter text ("" shows everything).
func (m Model) Filter() string { return m.filter }

// SetFilter changes the filter text; Refilter applies it.
func (m *Model) SetFilter(text string) { m.filter = text }

// Items says which items a Refilter considers: n of them, item i matching
// the lower-cased filter f (never "") when Match(i, f) is true, drawn with
// Row(i).
type Items struct {
	N     int
	Match func(i int, f string) bool
	Row   func(i int) []string
}

// Refilter recomputes the items shown. The cursor goes to the item keep
// matches (keep may be nil); if none does, it stays on the same row.
func (m *Model) Refilter(items Items, keep func(i int) bool) {
	f := strings.ToLower(m.filter)
	cursor := m.Cursor()
	m.n = items.N
	if f == "" {
		// Unfiltered, row r is item r: no index of 100,000 rows to build.
		m.shown = nil
		if keep != nil {
			for i := 0; i < items.N; i++ {
				if keep(i) {
					cursor = i
					break
				}
			}
		}
		m.SetRows(items.N, items.Row)
		m.SetCursor(cursor)
		return
	}
	m.shown = make([]int, 0, 64)
	for i := 0; i < items.N; i++ {
		if !items.Match(i, f) {
			continue
		}
		if keep != nil && keep(i) {
			cursor = len(m.shown)
		}
		m.shown = append(m.shown, i)
	}
	shown := m.shown
	m.SetRows(len(shown), func(r int) []string { return items.Row(shown[r]) })
	m.SetCursor(cursor)
}

// Shown is the number of items shown.
func (m Model) Shown() int {
	if m.shown == nil {
		return m.n
	}
	return len(m.shown)
}

// Item is the item on row r.
func (m Model) Item(r int) int {
	if m.shown == nil {
		return r
	}
	return m.shown[r]
}

// Selected is the item under the cursor; false when nothing is shown.
func (m Model) Selected() (int, bool) {
	n := m.Shown()
	if n == 0 {
		return 0, false
	}
	return m.Item(min(m.Cursor(), n-1)), true
}

// Update moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.Model, cmd = m.Model.Update(msg)
	return m, cmd
}

// Heading is the view's title line: "Title  summary", with how many are
// shown while a filter is set.
func (m Model) Heading(title, summary string) string {
	if m.filter != "" {
		summary += fmt.Sprintf(" (%d shown, filter %q)", m.Shown(), m.filter)
	}
	return common.Fit(m.Styles.Title.Render(title)+"  "+summary, m.Width)
}
