package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/bookmarks"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/lineinput"
	"github.com/zkherd/zkherd/tui/loadview"
	"github.com/zkherd/zkherd/tui/views/search"
	"github.com/zkherd/zkherd/tui/views/tree"
)

// inputMode is what the bottom input line is for.
type inputMode int

const (
	inputNone inputMode = iota
	inputFilter
	inputCommand
	inputPrompt
)

// noticeFor is how long a notice stays in the status line.
const noticeFor = 8 * time.Second

// changeBatch is the shortest time between two deliveries of watch
// notifications: at most 10 updates per second.
const changeBatch = 100 * time.Millisecond

// clearNoticeMsg clears the notice with the given sequence number.
type clearNoticeMsg struct{ seq int }

// clockMsg is the status line's clock: once a second, so that a snapshot
// that is late says so (inspect.Snapshot.Overdue).
type clockMsg time.Time

// quitMsg quits after the user confirmed it.
type quitMsg struct{}

// feeds are the live data sources of a Model; nil channels are unused.
type feeds struct {
	snapshots <-chan *inspect.Snapshot
	changes   <-chan struct{}
	take      func() []inspect.Change
	loads     <-chan *loadview.Snapshot
	// wake starts the cluster feeds of a load dashboard when a cluster
	// view is first shown; nil when they run from the start.
	wake func()
	// shown tells the source what the view on screen shows of what it
	// asks the servers: what no view shows is asked less often or not at
	// all (nil: no source).
	shown func(inspect.Shown)
}

// tell says to the source what view v, now on screen, shows.
func (f feeds) tell(v viewID) {
	if f.shown != nil {
		f.shown(shownBy(v))
	}
}

// shownBy is what view v shows of the servers' answers: the Locks view
// judges each waiter's watch, the Sessions view lists watches, sessions
// and their ephemerals, the Servers view the members' figures, the Tree
// its followed paths.
func shownBy(v viewID) inspect.Shown {
	return inspect.Shown{
		Watches:  v == viewLocks || v == viewSessions,
		Sessions: v == viewSessions,
		Servers:  v == viewServers,
		Tree:     v == viewTree,
	}
}

// Model is the root of the interface: a tab bar, the active view, a status
// line and the help bar. It holds each view as its concrete type.
type Model struct {
	common common.Common
	ctx    context.Context
	feeds  feeds
	title  string // connection summary for the tab bar

	order  []viewID           // the views shown, in tab order
	views  []common.Component // the views, as order
	active int                // index into order

	help      help.Model
	input     lineinput.Model
	mode      inputMode
	promptCmd string
	cancelCmd string // sent to the view when the prompt is left with esc
	confirm   *common.ConfirmMsg
	notice    string
	noticeErr bool
	// noticeUser: the notice answers something the user did (a view's
	// NoticeMsg), not a snapshot.
	noticeUser bool
	noticeSeq  int
	filters    map[viewID]string
	hist       history

	lastNotices  string // notices of the previous snapshot, to show changes only
	snap         *inspect.Snapshot
	now          time.Time // the clock's last tick; zero before the first
	loadDone     bool
	exitWhenDone bool // quit as soon as the load feed closes
	quit         bool // the user asked to quit (vs the feeds ending)
}

// newModel builds the root with the given views, first one active.
func newModel(ctx context.Context, c common.Common, src tree.Source, order []viewID, f feeds, title string) Model {
	h := help.New()
	h.Styles = c.Styles.Help
	m := Model{common: c, ctx: ctx, feeds: f, title: title, help: h, filters: map[viewID]string{}}
	env := viewEnv{ctx: ctx, common: c, tree: src, bookmarks: bookmarks.Open()}
	if s, ok := src.(search.Source); ok { // the inspector reads and searches
		env.search = s
	}
	for _, id := range order {
		if spec, ok := specOf(id); ok {
			m.order = append(m.order, id)
			m.views = append(m.views, spec.build(env))
		}
	}
	m.resize(c.Width, c.Height)
	return m
}

// Init starts the live feeds and lists the tree's root.
func (m Model) Init() tea.Cmd {
	m.feeds.tell(m.current())
	cmds := []tea.Cmd{m.listenSnapshots(), m.listenChanges(), m.listenLoad(), m.tickClock()}
	for _, v := range m.views {
		cmds = append(cmds, v.Init())
	}
	return tea.Batch(cmds...)
}

func (m Model) current() viewID { return m.order[m.active] }

// tickClock arms the next clockMsg while snapshots are fed.
func (m Model) tickClock() tea.Cmd {
	if m.feeds.snapshots == nil {
		return nil
	}
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return clockMsg(t) })
}

func (m Model) listenSnapshots() tea.Cmd {
	if m.feeds.snapshots == nil {
		return nil
	}
	return common.Listen(m.ctx, "snapshots", m.feeds.snapshots, func(s *inspect.Snapshot) tea.Msg {
		return common.SnapshotMsg{Snapshot: s}
	})
}

func (m Model) listenLoad() tea.Cmd {
	if m.feeds.loads == nil {
		return nil
	}
	return common.Listen(m.ctx, "load", m.feeds.loads, func(s *loadview.Snapshot) tea.Msg {
		return common.LoadMsg{Snapshot: s}
	})
}

// listenChanges waits for watch notifications, then at least changeBatch
// more so that bursts arrive as one message.
func (m Model) listenChanges() tea.Cmd {
	if m.feeds.changes == nil {
		return nil
	}
	ctx, ch, take := m.ctx, m.feeds.changes, m.feeds.take
	return func() tea.Msg {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
		t := time.NewTimer(changeBatch)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
		return common.ChangesMsg{Changes: take()}
	}
}

// Update routes messages (see update) and, when the view on screen
// changed, tells the source whether watches are needed now.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	before := m.current()
	prev := m.here()
	next, cmd := m.update(msg)
	nm, ok := next.(Model)
	if !ok {
		return next, cmd
	}
	if !isHistoryMove(nm, msg) {
		nm.record(prev)
	}
	if nm.current() != before {
		nm.feeds.tell(nm.current())
	}
	return nm, cmd
}

// isHistoryMove reports whether msg is a key that moves through the
// history (which keeps its own lists) rather than somewhere new.
func isHistoryMove(m Model, msg tea.Msg) bool {
	k, ok := msg.(tea.KeyPressMsg)
	km := m.common.KeyMap
	return ok && m.mode == inputNone && m.confirm == nil && key.Matches(k, km.HistoryBack, km.HistoryForward)
}

// update routes messages: keys to the input line, a pending confirmation,
// the global bindings or the active view; data to every view that shows it.
func (m Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyPressMsg:
		tm, cmd := m.key(msg)
		if nm, ok := tm.(Model); ok && nm.feeds.wake != nil && nm.current() != viewLoad {
			nm.feeds.wake()
		}
		return tm, cmd
	case common.SnapshotMsg:
		m.snap = msg.Snapshot
		cmd := m.broadcast(msg)
		return m, tea.Batch(cmd, m.snapshotNotices(msg.Snapshot), m.listenSnapshots())
	case clockMsg:
		m.now = time.Time(msg)
		return m, m.tickClock()
	case common.LoadMsg:
		return m, tea.Batch(m.broadcast(msg), m.listenLoad())
	case common.ChangesMsg:
		return m, tea.Batch(m.broadcast(msg), m.listenChanges())
	case common.ChannelClosedMsg:
		if msg.Name == "load" {
			m.loadDone = true
			if m.exitWhenDone {
				return m, tea.Quit
			}
			return m, m.setNotice("the load run has finished: q to exit", false)
		}
		return m, nil
	case common.NoticeMsg:
		cmd := m.setNotice(msg.Text, msg.Error)
		m.noticeUser = true
		return m, cmd
	case quitMsg:
		m.quit = true
		return m, tea.Quit
	case clearNoticeMsg:
		if msg.seq == m.noticeSeq {
			m.notice = ""
		}
		return m, nil
	case common.ConfirmMsg:
		m.confirm = &msg
		return m, nil
	case common.GotoMsg:
		return m.gotoPlace(msg)
	case common.PromptMsg:
		m.mode, m.promptCmd, m.cancelCmd = inputPrompt, msg.Command, msg.CancelCommand
		m.input.Prompt = msg.Prompt
		m.input.SetValue(msg.Initial)
		return m, nil
	case tea.PasteMsg:
		if m.mode != inputNone {
			m.input = m.input.Update(msg)
		}
		return m, nil
	}
	// Anything else (replies to a view's own commands) goes to every
	// view; each ignores what is not its own.
	return m, m.broadcast(msg)
}

// broadcast sends msg to every view; each ignores what is not its own.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, len(m.views))
	for i, v := range m.views {
		cmds[i] = v.Update(msg)
	}
	return tea.Batch(cmds...)
}

// toActive sends msg to the active view only.
func (m *Model) toActive(msg tea.Msg) tea.Cmd {
	if len(m.views) == 0 {
		return nil
	}
	return m.views[m.active].Update(msg)
}

// snapshotNotices shows a snapshot's notices when they differ from the
// previous snapshot's: a member going down, a missing capability.
func (m *Model) snapshotNotices(s *inspect.Snapshot) tea.Cmd {
	joined := strings.Join(s.Notices, "\n")
	if joined == m.lastNotices {
		return nil
	}
	m.lastNotices = joined
	if len(s.Notices) == 0 {
		return nil
	}
	return m.setNotice(s.Notices[0], true)
}

func (m *Model) setNotice(text string, isErr bool) tea.Cmd {
	m.noticeSeq++
	m.notice, m.noticeErr, m.noticeUser = text, isErr, false
	seq := m.noticeSeq
	return tea.Tick(noticeFor, func(time.Time) tea.Msg { return clearNoticeMsg{seq} })
}

func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	km := m.common.KeyMap
	if k.String() == "ctrl+c" {
		m.quit = true
		if c := m.confirm; c != nil && c.No != nil {
			// A question left unanswered is a no: what it would have
			// cleaned up (an edit's temporary file) is cleaned up.
			return m, tea.Sequence(c.No, tea.Quit)
		}
		return m, tea.Quit
	}
	if m.noticeErr && m.noticeUser {
		// An error about what the user did: the next key press moves on
		// from it. (What the servers report stays its while.)
		m.notice, m.noticeErr = "", false
	}
	if m.confirm != nil {
		c := m.confirm
		switch {
		case key.Matches(k, km.Yes):
			m.confirm = nil
			return m, c.Yes
		case key.Matches(k, km.No):
			m.confirm = nil
			return m, tea.Batch(c.No, m.setNotice("cancelled", false))
		}
		return m, nil
	}
	if m.mode != inputNone {
		return m.inputKey(k)
	}
	switch {
	case key.Matches(k, km.Quit):
		return m.askQuit()
	case key.Matches(k, km.Help):
		m.help.ShowAll = !m.help.ShowAll
		m.resize(m.common.Width, m.common.Height)
		return m, nil
	case key.Matches(k, km.Filter):
		m.mode = inputFilter
		m.input.Prompt = "/"
		m.input.SetValue(m.filters[m.current()])
		return m, nil
	case key.Matches(k, km.Command):
		m.mode = inputCommand
		m.input.Prompt = ":"
		m.input.SetValue("")
		return m, nil
	case key.Matches(k, km.HistoryBack) && len(m.order) > 1:
		return m.moveHistory(true)
	case key.Matches(k, km.HistoryForward) && len(m.order) > 1:
		return m.moveHistory(false)
	case key.Matches(k, km.Back) && m.help.ShowAll:
		m.help.ShowAll = false
		m.resize(m.common.Width, m.common.Height)
		return m, nil
	case key.Matches(k, km.Back) && m.filters[m.current()] != "":
		return m, m.setFilter("")
	}
	for i, b := range km.Views {
		if key.Matches(k, b) && i < len(m.order) {
			m.active = i
			return m, nil
		}
	}
	return m, m.toActive(k)
}

// askQuit quits, after asking if a load run is still going (quitting
// stops it: its report is partial).
func (m Model) askQuit() (tea.Model, tea.Cmd) {
	if m.feeds.loads != nil && !m.loadDone {
		m.confirm = &common.ConfirmMsg{
			Prompt: "the load run is still going: stop it (partial report) and quit? y/N",
			Yes:    func() tea.Msg { return quitMsg{} },
		}
		return m, nil
	}
	m.quit = true
	return m, tea.Quit
}

func (m Model) inputKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "esc":
		mode := m.mode
		m.mode = inputNone
		switch {
		case mode == inputFilter:
			return m, m.setFilter("")
		case mode == inputPrompt && m.cancelCmd != "":
			return m, m.toActive(common.CommandMsg{Name: m.cancelCmd})
		}
		return m, nil
	case "enter":
		mode, text := m.mode, m.input.Value()
		m.mode = inputNone
		switch mode {
		case inputFilter:
			return m, m.setFilter(text)
		case inputCommand:
			return m.command(text)
		case inputPrompt:
			return m, m.toActive(common.CommandMsg{Name: m.promptCmd, Arg: text})
		}
		return m, nil
	}
	m.input = m.input.Update(k)
	if m.mode == inputFilter {
		// Filter as the user types.
		return m, m.setFilter(m.input.Value())
	}
	return m, nil
}

func (m *Model) setFilter(text string) tea.Cmd {
	m.filters[m.current()] = text
	return m.toActive(common.FilterMsg{Text: text})
}

// command runs a ":" command: a view name switches to it, q quits, help
// toggles the help, anything else goes to the active view.
func (m Model) command(text string) (tea.Model, tea.Cmd) {
	name, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "":
		return m, nil
	case "q", "quit", "exit":
		return m.askQuit()
	case "help":
		m.help.ShowAll = !m.help.ShowAll
		m.resize(m.common.Width, m.common.Height)
		return m, nil
	case "cd":
		if !m.switchTo(viewTree) {
			return m, m.setNotice("no tree view here", true)
		}
	}
	if v, ok := viewNamed(name); ok {
		// ":locks" shows a view; ":find lock-" shows it and hands it the
		// command.
		if !m.switchTo(v) {
			return m, m.setNotice(fmt.Sprintf("no %s view in this screen", name), true)
		}
		if arg == "" {
			return m, nil
		}
	}
	return m, m.toActive(common.CommandMsg{Name: name, Arg: arg})
}

func (m *Model) switchTo(v viewID) bool {
	for i, o := range m.order {
		if o == v {
			m.active = i
			return true
		}
	}
	return false
}

// chromeHeight is the lines the root uses around the view: tab bar,
// status line and help.
func (m Model) chromeHeight() int {
	h := 2 + 1
	if m.help.ShowAll {
		h = 2 + strings.Count(m.help.View(m.helpKeys()), "\n") + 1
	}
	return h
}

func (m *Model) resize(w, h int) {
	m.common.SetSize(w, h)
	m.help.SetWidth(w)
	vh := max(h-m.chromeHeight(), 0)
	for _, v := range m.views {
		v.SetSize(w, vh)
	}
}

// helpKeys is the help bar's content: the active view's keys, then the
// global ones.
type helpKeys struct {
	view   []key.Binding
	global []key.Binding
	nav    []key.Binding
	views  key.Binding // "1-5 views", disabled with a single view
	quit   key.Binding
}

func (h helpKeys) ShortHelp() []key.Binding {
	// The view's keys, then ? help, the view switch (if any) and q quit.
	out := append(append([]key.Binding{}, h.view...), h.global[0])
	if h.views.Enabled() {
		out = append(out, h.views)
	}
	return append(out, h.quit)
}

func (h helpKeys) FullHelp() [][]key.Binding {
	// The view's column lists only what the other two do not; a key the
	// view gives its own meaning (the dashboard's tab: next phase) is
	// listed in their column with that meaning, as the short help says.
	mine := map[string]key.Binding{}
	for _, b := range h.view {
		mine[b.Help().Key] = b
	}
	seen := map[string]bool{}
	column := func(bs []key.Binding) []key.Binding {
		out := make([]key.Binding, len(bs))
		for i, b := range bs {
			seen[b.Help().Key] = true
			if v, ok := mine[b.Help().Key]; ok {
				b = v
			}
			out[i] = b
		}
		return out
	}
	nav, global := column(h.nav), column(h.global)
	var own []key.Binding
	for _, b := range h.view {
		if !seen[b.Help().Key] {
			own = append(own, b)
		}
	}
	return [][]key.Binding{own, nav, global}
}

func (m Model) helpKeys() helpKeys {
	km := m.common.KeyMap
	var view []key.Binding
	if len(m.views) > 0 {
		view = m.views[m.active].ShortHelp()
	}
	views := key.NewBinding(key.WithKeys("1"), key.WithHelp(fmt.Sprintf("1-%d", len(m.order)), "views"))
	global := km.Global()
	if len(m.order) > 1 {
		global = append(global, views)
	} else {
		views.SetEnabled(false)
		global = slices.DeleteFunc(global, func(b key.Binding) bool {
			return b.Help().Key == km.HistoryBack.Help().Key || b.Help().Key == km.HistoryForward.Help().Key
		})
	}
	return helpKeys{view: view, global: global, nav: km.Navigation(), views: views, quit: km.Quit}
}

// View draws the whole screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "zkherd"
	return v
}

// render draws the screen as text; exactly Height lines of Width cells.
func (m Model) render() string {
	w, h := m.common.Width, m.common.Height
	if w <= 0 || h <= 0 {
		return ""
	}
	var body string
	if len(m.views) > 0 {
		body = m.views[m.active].View()
	}
	parts := []string{m.tabBar(), body, m.statusLine(), m.help.View(m.helpKeys())}
	return common.Lines(strings.Join(parts, "\n"), w, h)
}

func (m Model) tabBar() string {
	s := m.common.Styles
	var b strings.Builder
	for i, v := range m.views {
		label := fmt.Sprintf(" %d %s ", i+1, v.Title())
		if i == m.active {
			b.WriteString(s.TabActive.Render(label))
		} else {
			b.WriteString(s.TabInactive.Render(label))
		}
	}
	tabs := b.String()
	right := m.title
	room := m.common.Width - common.Width(tabs) - 1
	if room > 8 {
		return tabs + " " + common.FitRight(s.Dim.Render(right), room)
	}
	return common.Fit(tabs, m.common.Width)
}

// statusLine is the input line, a confirmation, a notice, or a summary.
func (m Model) statusLine() string {
	s := m.common.Styles
	w := m.common.Width
	switch {
	case m.confirm != nil:
		return common.Fit(s.Warn.Render(m.confirm.Prompt), w)
	case m.mode != inputNone:
		return common.TruncateLeft(m.input.View(), w)
	case m.notice != "":
		style := s.Notice
		if m.noticeErr {
			style = s.Bad
		}
		return common.Fit(style.Render(m.notice), w)
	}
	return common.Fit(s.StatusBar.Render(m.summary()), w)
}

func (m Model) summary() string {
	var parts []string
	if m.snap != nil {
		c := &m.snap.Cluster
		members := fmt.Sprintf("%d/%d members up", c.UpMembers(), len(c.Members))
		sessions := common.Plural(len(c.Sessions), "session", "sessions")
		if at, old := m.snap.SessionsAsOf(); old {
			sessions += " (as of " + at.Format("15:04:05") + ")"
		}
		if c.Pending {
			members += " (polling…)"
			if c.SessionsUnknown {
				sessions = "sessions: confirming…"
			}
		}
		polled := "polled " + c.At.Format("15:04:05")
		if late := m.snap.Overdue(m.now); late > 0 && !m.now.IsZero() {
			// What is on screen is that old: the next poll is still
			// under way (a busy server, a slow network).
			polled = fmt.Sprintf("polling… (last poll %s, %s ago)", c.At.Format("15:04:05"),
				m.now.Sub(c.At).Truncate(time.Second))
		}
		parts = append(parts, members, sessions,
			common.Plural(len(m.snap.Locks), "lock", "locks"), polled)
	}
	if f := m.filters[m.current()]; f != "" {
		parts = append(parts, fmt.Sprintf("filter %q (esc clears)", f))
	}
	if m.loadDone {
		parts = append(parts, "load run finished")
	}
	return strings.Join(parts, " · ")
}
