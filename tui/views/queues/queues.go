// Package queues is the Queues view: every directory of sequential items,
// its depth over time as a sparkline, enqueue and dequeue rates, and the age
// of the head item.
package queues

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/components/sparkline"
	"github.com/zkherd/zkherd/tui/components/table"
	"github.com/zkherd/zkherd/tui/styles"
)

// Model is the Queues view.
type Model struct {
	common.Common
	snap *inspect.Snapshot
	list filtertable.Model // of snap.Queues
}

// New returns an empty Queues view.
func New(c common.Common) Model {
	m := Model{Common: c, list: filtertable.New(c)}
	m.layout()
	return m
}

// Title names the view in the tab bar.
func (m Model) Title() string { return "Queues" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, keyHead, m.KeyMap.Filter}
}

// keyHead drills down to the queue's head item in the Tree.
var keyHead = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "head item"))

// Place is the queue under the cursor (common.Component).
func (m Model) Place() (location, target string) {
	if q := m.selected(); q != nil {
		return "", q.Path
	}
	return "", ""
}

func (m Model) selected() *inspect.Queue {
	i, ok := m.list.Selected()
	if m.snap == nil || !ok || i >= len(m.snap.Queues) {
		return nil
	}
	return &m.snap.Queues[i]
}

// head drills down to the head item of the queue under the cursor (the
// queue's directory when it is empty or its head is not known).
func (m Model) head() tea.Cmd {
	q := m.selected()
	if q == nil {
		return nil
	}
	target := q.Path
	if q.Head != "" {
		target = path.Join(q.Path, q.Head)
	}
	return func() tea.Msg { return common.GotoMsg{View: "tree", Target: target} }
}

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.refilter() // rows are drawn for the width
	m.layout()
}

func (m *Model) layout() {
	cols := []table.Column{
		{Title: "queue", MinWidth: 12},
		{Title: "depth", Width: 7, Right: true},
		{Title: "depth over time", Width: 20},
		{Title: "enq/s", Width: 7, Right: true},
		{Title: "deq/s", Width: 7, Right: true},
		{Title: "head age", Width: 8, Right: true},
	}
	switch {
	case m.Width >= 110:
		cols[2].Width = 40
	case m.Width < 76:
		cols[2].Width = 10
		cols = slices.Delete(cols, 5, 6)
	}
	m.list.SetColumns(cols)
	m.list.SetSize(m.Width, min(m.list.Shown()+1, max(m.Height-4, 1)))
}

// sparkWidth is the width of the sparkline column.
func (m Model) sparkWidth() int {
	switch {
	case m.Width >= 110:
		return 40
	case m.Width < 76:
		return 10
	}
	return 20
}

// Update handles snapshots, the filter and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.SnapshotMsg:
		keep := m.selectedPath()
		m.snap = msg.Snapshot
		m.show(keep)
	case common.FilterMsg:
		m.list.SetFilter(msg.Text)
		m.refilter()
	case common.ShowMsg:
		m.show(msg.Target)
	case tea.KeyPressMsg:
		if key.Matches(msg, keyHead) {
			return m, m.head()
		}
		var cmd tea.Cmd
		m.list, cmd = m.list.Update(msg)
		return m, cmd
	}
	return m, nil
}

func (m *Model) refilter() { m.show(m.selectedPath()) }

// selectedPath is the path of the queue under the cursor, "" if none.
func (m Model) selectedPath() string {
	if q := m.selected(); q != nil {
		return q.Path
	}
	return ""
}

// show puts the cursor on the queue at path p, if shown.
func (m *Model) show(p string) {
	if m.snap == nil {
		return
	}
	qs := m.snap.Queues
	m.list.Refilter(filtertable.Items{
		N:     len(qs),
		Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(qs[i].Path), f) },
		// The row function closes over queueRows, never over the Model
		// (whose copies would keep every snapshot reachable through the
		// table's previous row function).
		Row: queueRows{snap: m.snap, styles: m.Styles, width: m.Width, spark: m.sparkWidth()}.row,
	}, func(i int) bool { return qs[i].Path == p })
	m.layout()
}

// queueRows is what the list's rows are drawn from.
type queueRows struct {
	snap   *inspect.Snapshot
	styles *styles.Styles
	width  int
	spark  int
}

func (r queueRows) row(i int) []string {
	q := &r.snap.Queues[i]
	row := []string{
		common.TruncateLeft(q.Path, max(r.width-60, 12)),
		common.Count(int64(q.Depth)),
		r.styles.Spark.Render(sparkline.Render(sparkline.Ints(q.Depths), r.spark, 0)),
		common.Rate(q.EnqueueRate),
		common.Rate(q.DequeueRate),
		common.Duration(q.HeadAge),
	}
	if r.width < 76 {
		return row[:5]
	}
	return row
}

// View draws the view, exactly Height lines.
func (m Model) View() string {
	if m.snap == nil {
		return common.Lines("waiting for the first scan of the tree…", m.Width, m.Height)
	}
	head := common.Plural(len(m.snap.Queues), "queue", "queues")
	if scan := common.Scanning(m.snap); scan != "" {
		// Found so far, not all: the first walk of the tree still runs.
		head += " · " + m.Styles.Dim.Render(scan)
	}
	ages := make([]time.Duration, len(m.snap.Queues))
	for i := range m.snap.Queues {
		ages[i] = m.snap.Queues[i].ReadAge(m.snap.At)
	}
	if still := common.StillDirs(ages); still != "" {
		head += " · " + m.Styles.Dim.Render(still)
	}
	lines := []string{m.list.Heading("Queues", head), m.list.View()}
	if sel, ok := m.list.Selected(); !ok {
		if len(m.snap.Queues) == 0 && m.snap.Scanning {
			lines = append(lines, m.Styles.Dim.Render("scanning the tree for queues…"))
		} else {
			lines = append(lines, m.Styles.Dim.Render("no queue found: directories of persistent sequential items (qn-, queue-, entry-…) show here"))
		}
	} else {
		q := &m.snap.Queues[sel]
		lo, hi := q.Depth, q.Depth
		for _, d := range q.Depths {
			lo, hi = min(lo, d), max(hi, d)
		}
		detail := fmt.Sprintf("%s: head %s, age %s · depth %s now, %s-%s over the last %d samples",
			q.Path, orDash(q.Head), common.Duration(q.HeadAge), common.Count(int64(q.Depth)), common.Count(int64(lo)), common.Count(int64(hi)), len(q.Depths))
		if read := common.LastRead(q.ReadAge(m.snap.At)); read != "" {
			detail += " · " + read
		}
		lines = append(lines, "", detail)
		if q.Taken > 0 {
			// A consumer holding an item (kazoo LockingQueue's taken/):
			// a stuck one must not look like an idle queue.
			taken := fmt.Sprintf("%s taken by consumers, not yet consumed", common.Plural(q.Taken, "item", "items"))
			if q.TakenItem != "" {
				taken += fmt.Sprintf("; oldest %s, taken %s ago by session %s", q.TakenItem, common.Duration(q.TakenAge), inspect.SessionHex(q.TakenBy))
			}
			lines = append(lines, m.Styles.Warn.Render(taken))
		}
	}
	return common.Lines(strings.Join(lines, "\n"), m.Width, m.Height)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
