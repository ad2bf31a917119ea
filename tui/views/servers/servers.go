// Package servers is the Servers view: one row per ensemble member (mode,
// zxid, latency, outstanding requests, connections, watches, znodes,
// ephemerals), a member that stops answering shown as down while the others
// keep updating; below, the watch fan-out per event, the child-watch blind
// spot and the capability probe with the config lines that enable what is
// missing.
package servers

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/pager"
	"github.com/zkherd/zkherd/tui/components/table"
	"github.com/zkherd/zkherd/tui/styles"
)

// Model is the Servers view.
type Model struct {
	common.Common
	snap    *inspect.Snapshot
	members table.Model
	details pager.Model
	focus   int // 0 members, 1 details
}

// New returns an empty Servers view.
func New(c common.Common) Model {
	m := Model{Common: c, members: table.New(c, nil), details: pager.New(c)}
	m.layout()
	return m
}

// Title names the view in the tab bar.
func (m Model) Title() string { return "Servers" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Up, m.KeyMap.Down, m.KeyMap.NextPane}
}

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.setRows()
	m.layout()
}

func (m *Model) layout() {
	cols := []table.Column{
		{Title: "member", MinWidth: 15},
		{Title: "state", Width: 5},
		{Title: "mode", Width: 10},
		{Title: "zxid", Width: 12},
		{Title: "lat avg/max", Width: 11, Right: true},
		{Title: "req/s", Width: 7, Right: true},
		{Title: "out", Width: 4, Right: true},
		{Title: "conns", Width: 5, Right: true},
		{Title: "watches", Width: 7, Right: true},
		{Title: "znodes", Width: 7, Right: true},
		{Title: "eph", Width: 6, Right: true},
	}
	switch {
	case m.Width < 76:
		// 60 columns: drop zxid, outstanding requests and znodes.
		cols = append(cols[:3:3], cols[4], cols[5], cols[7], cols[8])
	case m.Width < 100:
		// 80 columns: zxid, znodes and ephemerals move to the details.
		cols = append(cols[:3:3], cols[4:9]...)
	}
	m.members.SetColumns(cols)
	n := 0
	if m.snap != nil {
		n = len(m.snap.Cluster.Members)
	}
	// Members get the rows they need, up to half the space; the details
	// the rest, at least a third.
	top := min(n+1, max(m.Height-1-max(m.Height/3, 3), 2))
	m.members.SetSize(m.Width, max(top, 2))
	m.details.SetSize(m.Width, max(m.Height-1-max(top, 2), 0))
}

// Update handles snapshots and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.SnapshotMsg:
		m.snap = msg.Snapshot
		m.setRows()
		m.details.SetLines(m.detailLines())
		m.layout()
	case tea.KeyPressMsg:
		if key.Matches(msg, m.KeyMap.NextPane, m.KeyMap.PrevPane) {
			m.focus = 1 - m.focus
			m.setFocus()
			return m, nil
		}
		var cmd tea.Cmd
		if m.focus == 0 {
			m.members, cmd = m.members.Update(msg)
		} else {
			m.details, cmd = m.details.Update(msg)
		}
		return m, cmd
	}
	return m, nil
}

func (m *Model) setFocus() {
	if m.focus == 0 {
		m.members.Focus()
		m.details.Blur()
	} else {
		m.members.Blur()
		m.details.Focus()
	}
}

// setRows hands the table its rows; the row function closes over
// memberRows, never over the Model (whose copies would keep every snapshot
// reachable through the table's previous row function).
func (m *Model) setRows() {
	if m.snap == nil {
		return
	}
	r := memberRows{snap: m.snap, styles: m.Styles, width: m.Width}
	m.members.SetRows(len(m.snap.Cluster.Members), r.memberRow)
}

// memberRows is what the table's rows are drawn from.
type memberRows struct {
	snap   *inspect.Snapshot
	styles *styles.Styles
	width  int
}

func (r memberRows) memberRow(i int) []string {
	mb := &r.snap.Cluster.Members[i]
	s := r.styles
	if mb.Pending {
		return []string{mb.Addr, s.Dim.Render("polling…"), "-"}
	}
	if !mb.Up {
		return []string{mb.Addr, s.Bad.Render("DOWN"), "-"}
	}
	lat := strconv.FormatFloat(mb.LatencyAvg, 'f', 1, 64) + "/" + strconv.FormatFloat(mb.LatencyMax, 'f', 0, 64)
	rate := "-" // until two mntr replies, seconds apart on a busy server
	if mb.RatesKnown {
		rate = common.Rate(mb.RequestsPerSec)
	}
	row := []string{
		mb.Addr, s.OK.Render("up"), mb.Mode, "0x" + strconv.FormatInt(mb.Zxid, 16), lat, rate,
		common.Count(mb.Outstanding), common.Count(mb.Connections), common.Count(mb.Watches),
		common.Count(mb.Znodes), common.Count(mb.Ephemerals),
	}
	switch {
	case r.width < 76:
		return []string{row[0], row[1], row[2], row[4], row[5], row[7], row[8]}
	case r.width < 100:
		return append(row[:3:3], row[4:9]...)
	}
	return row
}

// detailLines are the fan-out, blind spot and capability lines.
func (m Model) detailLines() []string {
	s := m.Styles
	c := &m.snap.Cluster
	var lines []string
	if n, ok := c.ChildWatches(); ok {
		lines = append(lines, fmt.Sprintf("watches: %s total (mntr) = %s data watches itemised (wchp) + %s child watches (not itemised)",
			common.Count(c.TotalWatches), common.Count(c.ItemisedWatches), common.Count(n)))
	} else {
		lines = append(lines, fmt.Sprintf("watches: %s data watches itemised; child watches unknown (mntr or wchp missing)", common.Count(c.ItemisedWatches)))
	}
	for _, mb := range c.Members {
		if !mb.Up && !mb.Pending {
			reason := mb.Err
			if reason == "" {
				reason = "not answering"
			}
			lines = append(lines, s.Bad.Render(mb.Addr+" is down: ")+reason)
		}
	}
	lines = append(lines, fanOutLines(c)...)
	if m.Width < 100 {
		for _, mb := range c.Members {
			if mb.Up {
				lines = append(lines, fmt.Sprintf("%s: zxid 0x%x, %s znodes, %s ephemerals, version %s", mb.Addr, mb.Zxid,
					common.Count(mb.Znodes), common.Count(mb.Ephemerals), strings.SplitN(mb.Version, "-", 2)[0]))
			}
		}
	}
	lines = append(lines, "", s.Title.Render("Capabilities"))
	lines = append(lines, capabilityLines(m, c.Capabilities)...)
	return lines
}

// fanOutLines sums the members' watcher fan-out per event: over the last
// poll interval when known, and since the servers started.
func fanOutLines(c *inspect.Cluster) []string {
	var lines []string
	recent := make([][]inspect.FanOut, 0, len(c.Members))
	total := make([][]inspect.FanOut, 0, len(c.Members))
	for _, mb := range c.Members {
		recent = append(recent, mb.RecentFanOut)
		total = append(total, mb.FanOut)
	}
	if s := fanOutText(recent, false); s != "" {
		lines = append(lines, "watchers woken per event, last interval: "+s)
	}
	if s := fanOutText(total, true); s != "" {
		lines = append(lines, "watchers woken per event, since start:   "+s)
	}
	return lines
}

func fanOutText(perMember [][]inspect.FanOut, withMax bool) string {
	type agg struct {
		count int64
		sum   float64
		max   int64
	}
	byEvent := map[string]*agg{}
	for _, fs := range perMember {
		for _, f := range fs {
			a := byEvent[f.Event]
			if a == nil {
				a = &agg{}
				byEvent[f.Event] = a
			}
			a.count += f.Count
			a.sum += f.Avg * float64(f.Count)
			a.max = max(a.max, f.Max)
		}
	}
	events := make([]string, 0, len(byEvent))
	for e, a := range byEvent {
		if a.count > 0 {
			events = append(events, e)
		}
	}
	if len(events) == 0 {
		return ""
	}
	sort.Strings(events)
	parts := make([]string, 0, len(events))
	for _, e := range events {
		a := byEvent[e]
		p := fmt.Sprintf("%s %.1f (%s ev)", e, a.sum/float64(a.count), common.Count(a.count))
		if withMax {
			p = fmt.Sprintf("%s %.1f, max %d (%s ev)", e, a.sum/float64(a.count), a.max, common.Count(a.count))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// capabilityLines groups the probe by command: available everywhere, or
// the members missing it and the line that enables it.
func capabilityLines(m Model, caps []inspect.Capability) []string {
	s := m.Styles
	if len(caps) == 0 {
		return []string{s.Dim.Render("not probed yet")}
	}
	var ok []string
	var lines []string
	seen := map[string]bool{}
	missing := map[string][]string{}
	enable := map[string]string{}
	var order []string
	for _, c := range caps {
		if !seen[c.Command] {
			seen[c.Command] = true
			order = append(order, c.Command)
		}
		if !c.Available {
			missing[c.Command] = append(missing[c.Command], c.Member)
			enable[c.Command] = c.Enable
		}
	}
	for _, cmd := range order {
		if len(missing[cmd]) == 0 {
			ok = append(ok, cmd)
			continue
		}
		lines = append(lines, s.Bad.Render("x "+cmd)+" unavailable on "+strings.Join(missing[cmd], ", "))
		if enable[cmd] != "" {
			lines = append(lines, "    enable: "+enable[cmd])
		}
	}
	if len(ok) > 0 {
		lines = append([]string{s.OK.Render("ok ") + strings.Join(ok, " ")}, lines...)
	}
	return lines
}

// View draws the view, exactly Height lines.
func (m Model) View() string {
	if m.snap == nil {
		return common.Lines("waiting for the first poll of the members…", m.Width, m.Height)
	}
	c := &m.snap.Cluster
	head := fmt.Sprintf("%d members, %d up", len(c.Members), c.UpMembers())
	if c.Pending {
		head += " (polling…)"
	}
	for _, mb := range c.Members {
		if mb.Up && (mb.Mode == "leader" || mb.Mode == "standalone") {
			head += " · " + mb.Mode + " " + mb.Addr
		}
	}
	head += " · polled " + c.At.Format("15:04:05")
	return strings.Join([]string{
		common.Fit(m.Styles.Title.Render("Servers")+"  "+head, m.Width),
		m.members.View(),
		m.details.View(),
	}, "\n")
}
