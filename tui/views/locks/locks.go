// Package locks is the Locks view: every directory whose children match a
// known lock layout, and for the selected one its chain, holder -> waiter ->
// waiter, with each contender's session, endpoint, age and the node it
// actually watches, and the anomalies found (waiter without a watch, waiter
// watching the wrong node, herd, holder whose session is gone, unrecognised
// children).
package locks

import (
	"fmt"
	"path"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/chain"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/components/table"
	"github.com/zkherd/zkherd/tui/styles"
)

// maxAnomalyLines bounds the anomaly lines under the list.
const maxAnomalyLines = 3

// Model is the Locks view.
type Model struct {
	common.Common
	snap  *inspect.Snapshot
	list  filtertable.Model // of snap.Locks
	chain chain.Model
	focus int // 0 list, 1 chain
}

// New returns an empty Locks view.
func New(c common.Common) Model {
	m := Model{Common: c, list: filtertable.New(c), chain: chain.New(c)}
	m.chain.Blur()
	m.layout()
	return m
}

// Title names the view in the tab bar.
func (m Model) Title() string { return "Locks" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.NextPane, keyNode, m.KeyMap.Session, m.KeyMap.Filter}
}

// keyNode drills down: from a lock to its chain, from a contender to its
// node in the Tree.
var keyNode = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open"))

// Place is the lock under the cursor (common.Component).
func (m Model) Place() (location, target string) { return "", m.selectedPath() }

// drill goes from the lock under the cursor to its chain, and from the
// contender under the chain's cursor to its node in the Tree (a herd's
// waiter, which has no node, to its session).
func (m *Model) drill() tea.Cmd {
	l := m.selected()
	switch {
	case l == nil:
		return nil
	case m.focus == 0:
		m.setFocus(1)
		return nil
	}
	e := m.entry()
	switch {
	case e == nil:
		return nil
	case e.Node == "":
		return m.session()
	}
	target := path.Join(l.Path, e.Node)
	return func() tea.Msg { return common.GotoMsg{View: "tree", Target: target} }
}

// session drills down to the session of the contender under the chain's
// cursor, or of the lock's first holder when the list has the focus.
func (m Model) session() tea.Cmd {
	e := m.entry()
	if m.focus == 0 {
		e = nil
		if l := m.selected(); l != nil {
			for i := range l.Entries {
				if l.Entries[i].Role == inspect.RoleHolder {
					e = &l.Entries[i]
					break
				}
			}
		}
	}
	switch {
	case e == nil:
		return nil
	case e.Session == 0:
		return func() tea.Msg {
			return common.NoticeMsg{Text: "the servers did not say which session owns this node", Error: true}
		}
	}
	target := inspect.SessionHex(e.Session)
	return func() tea.Msg { return common.GotoMsg{View: "sessions", Target: target} }
}

// entry is the contender under the chain's cursor.
func (m Model) entry() *inspect.LockEntry {
	l := m.selected()
	if l == nil || m.chain.Cursor() >= len(l.Entries) {
		return nil
	}
	return &l.Entries[m.chain.Cursor()]
}

func (m *Model) setFocus(f int) {
	m.focus = f
	if f == 0 {
		m.list.Focus()
		m.chain.Blur()
	} else {
		m.list.Blur()
		m.chain.Focus()
	}
}

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.refilter(m.selectedPath()) // rows are drawn for the width
	m.layout()
}

func (m *Model) layout() {
	cols := []table.Column{
		{Title: "lock", MinWidth: 16},
		{Title: "layout", Width: 24}, // "curator lock or election"
		{Title: "hold", Width: 4, Right: true},
		{Title: "wait", Width: 6, Right: true},
		{Title: "anomalies", Width: 24},
	}
	if m.Width < 76 {
		cols = []table.Column{cols[0], cols[2], cols[3], {Title: "anomalies", Width: 14}}
	}
	m.list.SetColumns(cols)
	listH := min(m.list.Shown()+1, max((m.Height-2)/3, 3))
	listH = max(listH, 2)
	anom := m.anomalyLines()
	chainH := max(m.Height-1-listH-len(anom)-1, 0)
	m.list.SetSize(m.Width, listH)
	m.chain.SetSize(m.Width, chainH)
}

// Update handles snapshots, the filter and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.SnapshotMsg:
		current := m.selectedPath()
		m.snap = msg.Snapshot
		m.refilter(current)
	case common.FilterMsg:
		m.list.SetFilter(msg.Text)
		m.refilter(m.selectedPath())
	case common.ShowMsg:
		m.setFocus(0)
		m.refilter(msg.Target)
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, m.KeyMap.NextPane, m.KeyMap.PrevPane):
			m.setFocus(1 - m.focus)
			return m, nil
		case key.Matches(msg, keyNode):
			return m, m.drill()
		case key.Matches(msg, m.KeyMap.Session):
			return m, m.session()
		}
		var cmd tea.Cmd
		if m.focus == 0 {
			before := m.list.Cursor()
			m.list, cmd = m.list.Update(msg)
			if m.list.Cursor() != before {
				m.showSelected()
			}
		} else {
			m.chain, cmd = m.chain.Update(msg)
		}
		return m, cmd
	}
	return m, nil
}

// selectedPath is the path of the lock under the cursor, "" if none.
func (m Model) selectedPath() string {
	if l := m.selected(); l != nil {
		return l.Path
	}
	return ""
}

// refilter recomputes the shown locks, keeping the cursor on currentPath.
func (m *Model) refilter(currentPath string) {
	if m.snap == nil {
		return
	}
	locks := m.snap.Locks
	m.list.SetCursor(0) // where the cursor goes if currentPath is gone
	m.list.Refilter(filtertable.Items{
		N: len(locks),
		Match: func(i int, f string) bool {
			return strings.Contains(strings.ToLower(locks[i].Path), f) || strings.Contains(strings.ToLower(locks[i].Layout), f)
		},
		// The row function closes over lockRows, never over the Model: a
		// Model copy holds the table, whose previous row function holds the
		// previous copy, and so on back to every snapshot ever received
		// (the leak that grew the inspector by megabytes a second).
		Row: lockRows{snap: m.snap, styles: m.Styles, width: m.Width}.row,
	}, func(i int) bool { return locks[i].Path == currentPath })
	m.showSelected()
	m.layout()
}

func (m *Model) showSelected() {
	m.chain.SetLock(m.selected())
	m.layout()
}

func (m Model) selected() *inspect.Lock {
	i, ok := m.list.Selected()
	if m.snap == nil || !ok {
		return nil
	}
	return &m.snap.Locks[i]
}

// lockRows is what the list's rows are drawn from.
type lockRows struct {
	snap   *inspect.Snapshot
	styles *styles.Styles
	width  int
}

func (r lockRows) row(i int) []string {
	l := &r.snap.Locks[i]
	anom := summary(l)
	if anom != "" {
		anom = r.styles.Bad.Render("! " + anom)
	}
	row := []string{common.TruncateLeft(l.Path, max(r.width-64, 16)), l.Layout,
		common.Count(int64(l.Holders())), common.Count(int64(l.Waiters())), anom}
	if r.width < 76 {
		return []string{row[0], row[2], row[3], anom}
	}
	return row
}

// summary lists the anomaly kinds of a lock, e.g. "herd, no watch".
func summary(l *inspect.Lock) string {
	var set inspect.AnomalySet
	for _, a := range l.Anomalies {
		set = set.With(a.Kind)
	}
	return set.String()
}

// anomalyLines explain the selected lock's anomalies, wrapped, at most
// maxAnomalyLines lines.
func (m Model) anomalyLines() []string {
	l := m.selected()
	if l == nil || len(l.Anomalies) == 0 {
		return nil
	}
	var lines []string
	for i, a := range l.Anomalies {
		text := m.Styles.Bad.Render("! "+a.Kind.String()+":") + " " + a.Detail
		wrapped := strings.Split(ansi.Wrap(text, max(m.Width, 10), " "), "\n")
		for j, w := range wrapped {
			if j > 0 {
				w = "  " + w
			}
			lines = append(lines, w)
		}
		if len(lines) >= maxAnomalyLines {
			if rest := len(l.Anomalies) - i - 1; rest > 0 || len(lines) > maxAnomalyLines {
				lines = lines[:maxAnomalyLines-1]
				more := fmt.Sprintf("  … (%d anomalies in all)", len(l.Anomalies))
				lines = append(lines, more)
			}
			break
		}
	}
	return lines
}

// View draws the view, exactly Height lines.
func (m Model) View() string {
	if m.snap == nil {
		return common.Lines("waiting for the first scan of the tree…", m.Width, m.Height)
	}
	head := common.Plural(len(m.snap.Locks), "lock directory", "lock directories")
	if n := len(m.snap.Herds); n > 0 {
		head += " · " + m.Styles.Warn.Render(common.Plural(n, "watched-node herd", "watched-node herds")+" (Sessions)")
	}
	switch c := &m.snap.Cluster; {
	case c.WatchesPending:
		head += " · " + m.Styles.Dim.Render("confirming watches…")
	case c.WatchesUnknown:
		head += " · " + m.Styles.Dim.Render("watches unknown")
	}
	if scan := common.Scanning(m.snap); scan != "" {
		head += " · " + m.Styles.Dim.Render(scan)
	}
	ages := make([]time.Duration, len(m.snap.Locks))
	for i := range m.snap.Locks {
		ages[i] = m.snap.Locks[i].ReadAge(m.snap.At)
	}
	if still := common.StillDirs(ages); still != "" {
		head += " · " + m.Styles.Dim.Render(still)
	}
	lines := []string{m.list.Heading("Locks", head), m.list.View()}
	for _, a := range m.anomalyLines() {
		lines = append(lines, common.Fit(a, m.Width))
	}
	lines = append(lines, common.Fit(m.chainHeader(), m.Width))
	if m.chain.Height > 0 {
		lines = append(lines, m.chain.View())
	}
	return common.Lines(strings.Join(lines, "\n"), m.Width, m.Height)
}

func (m Model) chainHeader() string {
	l := m.selected()
	if l == nil {
		if len(m.snap.Locks) == 0 && m.snap.Scanning {
			return m.Styles.Dim.Render("scanning the tree for locks…")
		}
		if len(m.snap.Locks) == 0 {
			return m.Styles.Dim.Render("no lock found: directories whose children follow a Curator, kazoo, go-zookeeper, ZooKeeper or zkherd layout show here")
		}
		return m.Styles.Dim.Render("no lock matches the filter")
	}
	h := fmt.Sprintf("%d holding → %s waiting", l.Holders(), common.Count(int64(l.Waiters())))
	if n := len(l.Entries); n > m.chain.Height-1 && m.chain.Height > 1 {
		h += fmt.Sprintf(" · row %s of %s", common.Count(int64(m.chain.Cursor()+1)), common.Count(int64(n)))
	}
	if len(l.Unrecognised) > 0 {
		h += fmt.Sprintf(" · %d unrecognised", len(l.Unrecognised))
	}
	if read := common.LastRead(l.ReadAge(m.snap.At)); read != "" {
		h += " · " + read
	}
	h += " · "
	return m.Styles.Title.Render(h + common.TruncateLeft(l.Path, max(m.Width-common.Width(h), 8)))
}
