// Package chain draws a lock's waiter chain, holder -> waiter -> waiter,
// one contender per row with its session, client endpoint, age, the node
// its session actually watches, and what is wrong with it. Rows are drawn
// on demand, so a chain of 10,000 waiters scrolls as fast as one of ten.
package chain

import (
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/table"
	"github.com/zkherd/zkherd/tui/styles"
)

// Model is a scrollable chain.
type Model struct {
	common.Common
	lock  *inspect.Lock
	table table.Model
}

// New returns an empty chain.
func New(c common.Common) Model {
	m := Model{Common: c, table: table.New(c, nil)}
	m.layout()
	return m
}

// SetLock shows l (nil clears). The cursor stays on the same row index.
func (m *Model) SetLock(l *inspect.Lock) {
	m.lock = l
	n := 0
	if l != nil {
		n = len(l.Entries)
	}
	m.setRows(n)
}

// setRows hands the table its rows. The row function closes over chainRows,
// never over the Model, whose copies would keep every earlier lock (and
// its snapshot) reachable through the table's previous row function.
func (m *Model) setRows(n int) {
	r := chainRows{lock: m.lock, styles: m.Styles, width: m.Width}
	m.table.SetRows(n, r.row)
}

// chainRows is what the chain's rows are drawn from.
type chainRows struct {
	lock   *inspect.Lock
	styles *styles.Styles
	width  int
}

// Lock is the lock shown.
func (m Model) Lock() *inspect.Lock { return m.lock }

// SetSize sets the chain's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
}

// Focus and Blur pass to the table.
func (m *Model) Focus() { m.table.Focus() }
func (m *Model) Blur()  { m.table.Blur() }

// Cursor is the row index under the cursor.
func (m Model) Cursor() int { return m.table.Cursor() }

// layout picks the columns that fit: at 80 columns everything the chain
// needs, with node names shortened to their recipe part and sequence.
func (m *Model) layout() {
	cols := []table.Column{
		{Title: "#", Width: 5, Right: true},
		{Title: "role", Width: 6},
		{Title: "node", Width: 12},
		{Title: "session", Width: 17},
		{Title: "endpoint", Width: 15},
		{Title: "age", Width: 6, Right: true},
		{Title: "watches", MinWidth: 8},
	}
	switch {
	case m.Width >= 120:
		cols[0].Width = 6
		cols[2].Width = 19
		cols[4].Width = 21
		cols = append(cols[:6], table.Column{Title: "watches", Width: 20}, table.Column{Title: "state", MinWidth: 10})
	case m.Width < 76:
		// 60 columns: the endpoint gives way.
		cols = append(cols[:4:4], table.Column{Title: "age", Width: 6, Right: true}, table.Column{Title: "watches", MinWidth: 8})
	}
	m.table.SetColumns(cols)
	m.table.SetSize(m.Width, m.Height)
	m.setRows(m.table.Len())
}

func (r chainRows) row(i int) []string {
	e := &r.lock.Entries[i]
	s := r.styles
	role := connector(i, len(r.lock.Entries)) + roleName(e)
	session := "-"
	if e.Session != 0 {
		session = inspect.SessionHex(e.Session)
	}
	endpoint := e.Endpoint
	if endpoint == "" {
		endpoint = "-"
	}
	watch, state := watchCells(e, r.width >= 120)
	if r.lock.WatchUnknown && e.Role == inspect.RoleWaiter && e.Node != "" {
		watch, state = "?", "watch unknown"
		if r.width < 120 {
			watch = "? unknown"
		}
		if r.lock.WatchPending {
			// The servers' watch lists are on their way.
			watch, state = "…", "confirming…"
			if r.width < 120 {
				watch = "confirming…"
			}
		}
	}
	if e.Flags != 0 {
		state = s.Bad.Render(state)
	}
	node := inspect.ShortName(e.Node)
	if r.width < 120 {
		node = compactName(e)
	}
	if e.Node == "" {
		node = "(no node)"
	}
	cells := []string{strconv.Itoa(i), role, node, session, endpoint, common.Duration(e.Age), watch, state}
	if r.width >= 120 {
		return cells
	}
	if e.Flags != 0 {
		watch = s.Bad.Render(watch)
	}
	if r.width < 76 {
		return []string{cells[0], role, node, session, common.Duration(e.Age), watch}
	}
	return []string{cells[0], role, node, session, endpoint, common.Duration(e.Age), watch}
}

// connector draws the chain: ┌ for the head, ├ and └ for the rest.
func connector(i, n int) string {
	switch {
	case n == 1:
		return "─ "
	case i == 0:
		return "┌ "
	case i == n-1:
		return "└▶"
	default:
		return "├▶"
	}
}

func roleName(e *inspect.LockEntry) string {
	switch e.Role {
	case inspect.RoleHolder:
		return "HOLD"
	case inspect.RoleWaiter:
		return "wait"
	}
	return e.Kind
}

// watchCells says what the contender watches and whether that is right:
// in full (wide) the watched node's short name and a state column; compact,
// the watched node's sequence number, "ok", or what is wrong.
func watchCells(e *inspect.LockEntry, wide bool) (watch, state string) {
	switch {
	case e.Role == inspect.RoleHolder:
		state = "holds"
		if e.Flags.Has(inspect.AnomalyHolderGone) {
			state = "session gone"
			if !wide {
				return "! session gone", state
			}
		}
		return "-", state
	case e.Role != inspect.RoleWaiter:
		return "-", ""
	case e.Watch == inspect.WatchChild:
		return "⇶ children", "herd: child watch"
	case len(e.Watching) == 0 && e.Flags.Has(inspect.AnomalyNoWatch):
		if !wide {
			return "! none", ""
		}
		return "none", "no watch: may never wake"
	}
	name := inspect.ShortName
	if !wide {
		name = seqLabel
	}
	if len(e.Watching) == 0 && e.Expect != "" {
		// What it should watch by its layout's rule, and what the servers
		// say of it.
		watch = "→" + name(e.Expect)
		switch e.Watch {
		case inspect.WatchConfirmed:
			return watch + " ok", confirmedText(e.Confirmed)
		case inspect.WatchExpected:
			return watch + " ?", "expected (node newer than the watch lists)"
		}
		return watch + " ?", "expected, not listed yet"
	}
	first := e.Watching[0]
	if slices.Contains(e.Watching, e.Expect) {
		first = e.Expect
	}
	watch = "→" + name(first)
	if len(e.Watching) > 1 {
		watch += " +" + common.Count(int64(len(e.Watching)-1))
	}
	switch {
	case e.Flags.Has(inspect.AnomalyWrongWatch):
		state = "wrong node, want " + inspect.ShortName(e.Expect)
		if !wide {
			watch = "!" + strings.TrimPrefix(watch, "→") + " want " + seqLabel(e.Expect)
		}
	case e.Flags.Has(inspect.AnomalyHerd):
		state = "herd: shared watch"
		if !wide {
			watch = "!" + watch
		}
	default:
		watch += " ok"
		state = "ok"
		if e.Watch == inspect.WatchConfirmed {
			state = confirmedText(e.Confirmed)
		}
	}
	return watch, state
}

// confirmedText says the servers confirmed a watch, and how long ago when
// it was not by the last poll.
func confirmedText(age time.Duration) string {
	if age < time.Second {
		return "ok, confirmed"
	}
	return "ok, confirmed " + common.Duration(age) + " ago"
}

// compactName is the node's 10-digit sequence, prefixed with r or w for
// the two sides of a read/write lock: what fits 80 columns.
func compactName(e *inspect.LockEntry) string {
	n, ok := recipes.ParseNode(e.Node)
	if !ok || n.Seq < 0 {
		return inspect.ShortName(e.Node)
	}
	seq := e.Node[len(e.Node)-recipes.SeqDigits:]
	switch n.Kind {
	case recipes.KindRead:
		return "r" + seq
	case recipes.KindWrite:
		return "w" + seq
	}
	return seq
}

// seqLabel is a node's sequence number without leading zeros ("42"), or
// its name when it has none ("herd-lock").
func seqLabel(name string) string {
	if n, ok := recipes.ParseNode(name); ok && n.Seq >= 0 {
		return strconv.FormatInt(n.Seq, 10)
	}
	return name
}

// Update scrolls the chain.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.table, cmd = m.table.Update(msg)
	return m, cmd
}

// View draws the chain, exactly Height lines.
func (m Model) View() string { return m.table.View() }
