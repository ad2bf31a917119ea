package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/tui/common"
)

// maxHistory bounds the places remembered each way.
const maxHistory = 100

// place is one entry of the history: a view and what it showed.
type place struct {
	view     viewID
	location string // the view's Place location: a change is a move
	target   string // what ShowMsg needs to come back
}

// history is the places visited, as a browser's or k9s's: back holds
// the places left, most recent last; forward the ones gone back from.
type history struct {
	back, forward []place
}

// here is the active view's place.
func (m Model) here() place {
	if len(m.views) == 0 {
		return place{}
	}
	loc, target := m.views[m.active].Place()
	return place{view: m.current(), location: loc, target: target}
}

// record notes that the user moved from prev to the place on screen now:
// another view, or another location in the same one. A move by the history
// keys themselves is not recorded (moveHistory keeps the lists).
func (m *Model) record(prev place) {
	now := m.here()
	if now.view == prev.view && now.location == prev.location {
		return
	}
	m.hist.back = append(m.hist.back, prev)
	if len(m.hist.back) > maxHistory {
		m.hist.back = m.hist.back[1:]
	}
	m.hist.forward = m.hist.forward[:0]
}

// moveHistory goes back (or forward) one place: the place on screen goes
// onto the other list, and the view shown is told where to go.
func (m Model) moveHistory(back bool) (Model, tea.Cmd) {
	from, to := &m.hist.back, &m.hist.forward
	if !back {
		from, to = to, from
	}
	if len(*from) == 0 {
		if back {
			return m, m.setNotice("no place to go back to", false)
		}
		return m, m.setNotice("no place to go forward to", false)
	}
	p := (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	*to = append(*to, m.here())
	if !m.switchTo(p.view) {
		return m, nil
	}
	return m, m.toActive(common.ShowMsg{Target: p.target})
}

// gotoPlace drills down to a view's place (GotoMsg).
func (m Model) gotoPlace(g common.GotoMsg) (Model, tea.Cmd) {
	id, ok := viewNamed(g.View)
	if !ok || !m.switchTo(id) {
		return m, m.setNotice("no "+g.View+" view in this screen", true)
	}
	return m, m.toActive(common.ShowMsg{Target: g.Target})
}
