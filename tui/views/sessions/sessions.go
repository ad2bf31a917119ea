// Package sessions is the Sessions and watches view: every session of
// every member (merged cons/dump/wchp) with its client endpoint, server, last
// operation, latency, ephemerals and data watches; and the watched paths,
// most watched first, which is where a herd shows. Child watches never
// appear in wchp; their count is shown as "child watches (not itemised)".
package sessions

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/components/table"
	"github.com/zkherd/zkherd/tui/styles"
)

// Model is the Sessions view.
type Model struct {
	common.Common
	snap   *inspect.Snapshot
	paths  []int // indexes into snap.Cluster.Watches, most watchers first
	owners map[string]int64
	top    filtertable.Model // of snap.Cluster.Sessions
	bottom filtertable.Model // of paths, or of detail's ephemerals and watches
	focus  int
	// detail is the session whose ephemerals and watches the bottom pane
	// lists (a drill-down), 0 when it lists every watched path.
	detail int64
}

// New returns an empty Sessions view.
func New(c common.Common) Model {
	m := Model{Common: c, top: filtertable.New(c), bottom: filtertable.New(c)}
	m.bottom.Blur()
	m.layout()
	return m
}

// Title names the view in the tab bar.
func (m Model) Title() string { return "Sessions" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.NextPane, keyOpen, m.KeyMap.Filter}
}

// keyOpen drills down: from a session to its ephemerals and watches, from
// a path to its node in the Tree.
var keyOpen = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open"))

// Place is the session whose detail is shown (a move is another one) and
// the session under the cursor (common.Component).
func (m Model) Place() (location, target string) {
	if m.detail != 0 {
		location = inspect.SessionHex(m.detail)
	}
	if i, ok := m.top.Selected(); ok && m.snap != nil {
		return location, inspect.SessionHex(m.snap.Cluster.Sessions[i].ID)
	}
	return location, location
}

// show puts the cursor on the session target names (as SessionHex writes
// it) and lists its ephemerals and watches; "" shows every watched path.
func (m *Model) show(target string) {
	m.detail = 0
	if id, err := strconv.ParseUint(strings.TrimPrefix(target, "0x"), 16, 64); err == nil && target != "" {
		m.detail = int64(id)
	}
	m.refilter()
	m.setFocus(0)
	if m.detail != 0 {
		m.setFocus(1)
	}
	m.layout()
}

func (m *Model) setFocus(f int) {
	m.focus = f
	if f == 0 {
		m.top.Focus()
		m.bottom.Blur()
	} else {
		m.top.Blur()
		m.bottom.Focus()
	}
}

// open drills down from the row under the cursor: a session to its
// ephemerals and watches, a path to its node in the Tree.
func (m *Model) open() tea.Cmd {
	if m.snap == nil {
		return nil
	}
	if m.focus == 0 {
		if i, ok := m.top.Selected(); ok {
			m.show(inspect.SessionHex(m.snap.Cluster.Sessions[i].ID))
		}
		return nil
	}
	i, ok := m.bottom.Selected()
	if !ok {
		return nil
	}
	var target string
	if m.detail != 0 {
		rows := detailOf(m.snap, m.detail)
		target = rows[i].path
	} else {
		target = m.snap.Cluster.Watches[m.paths[i]].Path
	}
	return func() tea.Msg { return common.GotoMsg{View: "tree", Target: target} }
}

// detailRow is one ephemeral or watch of the session in detail.
type detailRow struct{ path, kind string }

func detailOf(snap *inspect.Snapshot, id int64) []detailRow {
	s, ok := snap.Cluster.Session(id)
	if !ok {
		return nil
	}
	rows := make([]detailRow, 0, len(s.Ephemerals)+len(s.Watches))
	for _, p := range s.Ephemerals {
		rows = append(rows, detailRow{p, "ephemeral"})
	}
	for _, p := range s.Watches {
		rows = append(rows, detailRow{p, "watch"})
	}
	return rows
}

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.refilter() // rows are drawn for the width
	m.layout()
}

func (m *Model) layout() {
	cols := []table.Column{
		{Title: "session", Width: 17},
		{Title: "endpoint", Width: 15},
		{Title: "server", Width: 15},
		{Title: "last op", Width: 8},
		{Title: "lat avg/max", Width: 11, Right: true},
		{Title: "eph", Width: 5, Right: true},
		{Title: "watches", Width: 7, Right: true},
	}
	switch {
	case m.Width >= 110:
		cols[1].Width, cols[2].Width = 21, 21
	case m.Width >= 76:
		// 80 columns: the server moves to the selected-session line.
		cols = []table.Column{cols[0], cols[1], cols[3], cols[4], cols[5], cols[6]}
	default:
		cols = []table.Column{cols[0], cols[1], cols[4], cols[5], cols[6]}
	}
	m.top.SetColumns(cols)
	if m.detail != 0 {
		m.bottom.SetColumns([]table.Column{
			{Title: "ephemerals and data watches of " + inspect.SessionHex(m.detail), MinWidth: 20},
			{Title: "kind", Width: 9},
		})
	} else {
		m.bottom.SetColumns([]table.Column{
			{Title: "watched path", MinWidth: 20},
			{Title: "sessions", Width: 8, Right: true},
			{Title: "owner", Width: 17},
		})
	}
	body := max(m.Height-3, 2) // title, selected-session line, separator
	topH := max(body*3/5, 2)
	m.top.SetSize(m.Width, topH)
	m.bottom.SetSize(m.Width, max(body-topH, 0))
}

// Update handles snapshots, the filter and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.SnapshotMsg:
		m.snap = msg.Snapshot
		m.owners = map[string]int64{}
		for _, s := range m.snap.Cluster.Sessions {
			for _, p := range s.Ephemerals {
				m.owners[p] = s.ID
			}
		}
		m.refilter()
	case common.FilterMsg:
		m.top.SetFilter(msg.Text)
		m.bottom.SetFilter(msg.Text)
		m.refilter()
	case common.ShowMsg:
		m.show(msg.Target)
	case common.CommandMsg:
		if msg.Name == "sessions" || msg.Name == "watches" { // ":sessions 0x…"
			m.show(msg.Arg)
		}
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, m.KeyMap.NextPane, m.KeyMap.PrevPane):
			m.setFocus(1 - m.focus)
			return m, nil
		case key.Matches(msg, keyOpen):
			return m, m.open()
		case key.Matches(msg, m.KeyMap.Back) && m.detail != 0:
			m.show("")
			return m, nil
		}
		var cmd tea.Cmd
		if m.focus == 0 {
			m.top, cmd = m.top.Update(msg)
		} else {
			m.bottom, cmd = m.bottom.Update(msg)
		}
		return m, cmd
	}
	return m, nil
}

func (m *Model) refilter() {
	if m.snap == nil {
		return
	}
	c := &m.snap.Cluster
	m.paths = m.paths[:0]
	for i := range c.Watches {
		m.paths = append(m.paths, i)
	}
	slices.SortStableFunc(m.paths, func(a, b int) int {
		return len(c.Watches[b].Sessions) - len(c.Watches[a].Sessions)
	})
	// The row functions close over sessionRows, never over the Model: a
	// Model copy holds the tables, whose previous row functions hold the
	// previous copy, and so on back to every snapshot ever received (the
	// leak that grew the inspector by megabytes a second).
	r := sessionRows{snap: m.snap, paths: slices.Clone(m.paths), owners: m.owners, styles: m.Styles, width: m.Width}
	var keep func(int) bool
	if id := m.detail; id != 0 {
		keep = func(i int) bool { return c.Sessions[i].ID == id }
	}
	m.top.Refilter(filtertable.Items{
		N:     len(c.Sessions),
		Match: func(i int, f string) bool { return sessionMatches(&c.Sessions[i], f) },
		Row:   r.sessionRow,
	}, keep)
	if m.detail != 0 {
		rows := detailOf(m.snap, m.detail)
		m.bottom.Refilter(filtertable.Items{
			N:     len(rows),
			Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(rows[i].path), f) },
			Row:   func(i int) []string { return []string{rows[i].path, rows[i].kind} },
		}, nil)
		return
	}
	paths := r.paths
	m.bottom.Refilter(filtertable.Items{
		N:     len(paths),
		Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(c.Watches[paths[i]].Path), f) },
		Row:   r.pathRow,
	}, nil)
}

// sessionRows is what the tables' rows are drawn from.
type sessionRows struct {
	snap   *inspect.Snapshot
	paths  []int
	owners map[string]int64
	styles *styles.Styles
	width  int
}

func sessionMatches(s *inspect.Session, f string) bool {
	if strings.Contains(inspect.SessionHex(s.ID), f) || strings.Contains(s.Endpoint, f) || strings.Contains(s.Member, f) {
		return true
	}
	for _, p := range s.Ephemerals {
		if strings.Contains(strings.ToLower(p), f) {
			return true
		}
	}
	for _, p := range s.Watches {
		if strings.Contains(strings.ToLower(p), f) {
			return true
		}
	}
	return false
}

func (r sessionRows) sessionRow(i int) []string {
	s := &r.snap.Cluster.Sessions[i]
	endpoint, member := s.Endpoint, s.Member
	switch {
	case member == "":
		endpoint, member = r.styles.Warn.Render("not connected"), "-"
	case s.ID == r.snap.Cluster.Self:
		endpoint = "this inspector"
	case s.Inspector:
		endpoint = "zkherd inspector"
	}
	lat := "-"
	if s.Member != "" {
		lat = fmt.Sprintf("%d/%d", s.LatencyAvg, s.LatencyMax)
	}
	row := []string{inspect.SessionHex(s.ID), endpoint, member, s.LastOp, lat,
		common.Count(int64(len(s.Ephemerals))), common.Count(int64(len(s.Watches)))}
	switch {
	case r.width >= 110:
		return row
	case r.width >= 76:
		return []string{row[0], row[1], row[3], row[4], row[5], row[6]}
	}
	return []string{row[0], row[1], row[4], row[5], row[6]}
}

func (r sessionRows) pathRow(i int) []string {
	w := &r.snap.Cluster.Watches[r.paths[i]]
	n := common.Count(int64(len(w.Sessions)))
	if len(w.Sessions) >= inspect.DefaultHerdThreshold && !inspect.SystemNode(w.Path) {
		n = r.styles.Bad.Render("! " + n)
	}
	owner := "-"
	if id, ok := r.owners[w.Path]; ok {
		owner = inspect.SessionHex(id)
	}
	return []string{common.TruncateLeft(w.Path, max(r.width-28, 20)), n, owner}
}

// selectedLine describes the session under the cursor.
func (m Model) selectedLine() string {
	if m.detail != 0 {
		if _, ok := m.snap.Cluster.Session(m.detail); !ok {
			return m.Styles.Warn.Render(inspect.SessionHex(m.detail) + " is not among the servers' sessions now (closed or expired); esc lists every watched path")
		}
	}
	sel, ok := m.top.Selected()
	if !ok {
		return m.Styles.Dim.Render("no session matches")
	}
	s := &m.snap.Cluster.Sessions[sel]
	parts := []string{inspect.SessionHex(s.ID)}
	if s.ID == m.snap.Cluster.Self {
		parts = append(parts, "this inspector's own session")
	}
	if s.Member != "" {
		parts = append(parts, "on "+s.Member)
	}
	if s.Timeout > 0 {
		parts = append(parts, "timeout "+common.Duration(s.Timeout))
	}
	if len(s.Ephemerals) > 0 {
		parts = append(parts, "owns "+strings.Join(s.Ephemerals, ", "))
	}
	if len(s.Watches) > 0 {
		parts = append(parts, "watches "+strings.Join(s.Watches, ", "))
	}
	return strings.Join(parts, " · ")
}

// View draws the view, exactly Height lines.
func (m Model) View() string {
	if m.snap == nil {
		return common.Lines("waiting for the first poll of the members…", m.Width, m.Height)
	}
	c := &m.snap.Cluster
	sessions := common.Count(int64(len(c.Sessions))) + " sessions"
	switch {
	case c.SessionsUnknown && c.Pending:
		sessions = m.Styles.Dim.Render("sessions: confirming… (waiting for the servers' first answers)")
	case c.SessionsUnknown:
		sessions = m.Styles.Warn.Render("sessions unknown (no member answers cons or dump)")
	default:
		if at, old := m.snap.SessionsAsOf(); old {
			// cons is paced by its cost: the list is that old.
			sessions += m.Styles.Dim.Render(" as of " + at.Format("15:04:05"))
		}
	}
	watches := fmt.Sprintf("%s data watches on %s paths", common.Count(c.ItemisedWatches), common.Count(int64(len(c.Watches))))
	switch {
	case c.WatchesPending:
		watches = m.Styles.Dim.Render("watches: confirming…")
	case c.WatchesUnknown:
		watches = m.Styles.Warn.Render("watches unknown")
		if c.WatchesNote != "" {
			watches += m.Styles.Dim.Render(" (" + c.WatchesNote + ")")
		}
	}
	head := sessions + " · " + watches
	if n := len(m.snap.Herds); n > 0 {
		head += " · " + m.Styles.Bad.Render(common.Plural(n, "herd", "herds")+" of watched nodes (! below)")
	}
	switch n, ok := c.ChildWatches(); {
	case ok:
		head += fmt.Sprintf(" · child watches (not itemised): %s", common.Count(n))
	case c.Pending:
	default:
		head += " · child watches: unknown"
	}
	if f := m.top.Filter(); f != "" {
		head += " · filter: " + f
	}
	if !c.SessionsComplete && !c.Pending {
		head += " · " + m.Styles.Warn.Render("partial: not every member answered cons")
	}
	lines := []string{
		common.Fit(m.Styles.Title.Render("Sessions")+"  "+head, m.Width),
		m.top.View(),
		common.Fit(m.selectedLine(), m.Width),
		common.Fit(m.Styles.Dim.Render(strings.Repeat("─", m.Width)), m.Width),
		m.bottom.View(),
	}
	return common.Lines(strings.Join(lines, "\n"), m.Width, m.Height)
}
