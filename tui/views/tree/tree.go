// Package tree is the Tree view: browse znodes one directory at a time.
// A directory's children are fetched once when it is opened (and again when
// its child watch fires), sorted, and paged by the list, so a node with
// 100,000 children opens once and scrolls freely. The node under the cursor
// is read (stat, data, ACL) after the cursor rests on it briefly, with a data
// watch that refreshes it when it changes. Data shows as pretty JSON, text,
// or hex for binary, cut to a readable size; a node whose ACL denies access
// says "no access" while everything else keeps working.
package tree

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/components/pager"
	"github.com/zkherd/zkherd/tui/components/table"
)

// Timing and size limits.
const (
	// settle is how long the cursor must rest on a node before it is read.
	settle = 120 * time.Millisecond
	// requestTimeout bounds each read.
	requestTimeout = 10 * time.Second
	// autoRefreshMax: larger listings are not re-fetched on every child
	// change; the header says they changed and r refreshes.
	autoRefreshMax = 10000
)

// Source is where the view reads and writes znodes; *inspect.Inspector is one.
type Source interface {
	Children(ctx context.Context, path string) (inspect.Children, error)
	Node(ctx context.Context, path string) (inspect.Node, error)
	Delete(ctx context.Context, path string, version int32) error
	SetData(ctx context.Context, path string, data []byte, version int32) error
	Writable() bool
}

// ChildrenMsg is a directory listing arriving.
type ChildrenMsg struct {
	Path     string
	Children inspect.Children
	Err      error
}

// NodeMsg is a node read arriving.
type NodeMsg struct {
	Path string
	Node inspect.Node
	Err  error
}

// WrittenMsg is the result of a delete or set-data.
type WrittenMsg struct {
	Op, Path string
	Err      error
}

// settledMsg fires settle after the cursor moved: the node under the
// cursor then is read.
type settledMsg struct{}

// Model is the Tree view.
type Model struct {
	common.Common
	ctx context.Context
	src Source

	dir      string
	listing  inspect.Children
	listErr  string
	loading  bool
	stale    bool
	list     filtertable.Model // of listing.Names
	selectOn string            // child to put the cursor on when the listing arrives

	nodePath string // path of the node under the cursor
	node     *inspect.Node
	nodeErr  string
	decoded  inspect.Decoded
	settling bool // a settledMsg is on its way
	detail   pager.Model
	focus    int // 0 list, 1 detail

	snap *inspect.Snapshot // for the ephemeral owner's endpoint
}

// New returns a Tree view reading from src (nil for a view fed only by
// messages, as in tests).
func New(ctx context.Context, c common.Common, src Source) Model {
	m := Model{Common: c, ctx: ctx, src: src, dir: "/", list: filtertable.New(c), detail: pager.New(c)}
	m.list.SetColumns([]table.Column{{Title: "name", MinWidth: 8}})
	m.list.SetHeader(false)
	m.layout()
	return m
}

// Init lists the root.
func (m Model) Init() tea.Cmd { return m.fetchChildren("/") }

// Title names the view in the tab bar.
func (m Model) Title() string { return "Tree" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	km := m.KeyMap
	b := []key.Binding{km.Right, km.Left, km.NextPane, km.Filter, km.Refresh}
	if m.src != nil && m.src.Writable() {
		b = append(b, km.Delete, km.Edit)
	}
	return b
}

// Dir is the directory listed.
func (m Model) Dir() string { return m.dir }

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
}

// sideBySide is true when list and detail are drawn next to each other.
func (m Model) sideBySide() bool { return m.Width >= 100 }

func (m *Model) layout() {
	body := max(m.Height-1, 0)
	if m.sideBySide() {
		lw := max(m.Width*2/5, 24)
		m.list.SetSize(lw, body)
		m.detail.SetSize(max(m.Width-lw-1, 0), body)
	} else {
		lh := max(body*2/5, 3)
		m.list.SetSize(m.Width, lh)
		m.detail.SetSize(m.Width, max(body-lh-1, 0))
	}
	m.rebuildDetail()
}

// Update handles listings, node reads, watch changes, keys and commands.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ChildrenMsg:
		return m.gotChildren(msg)
	case NodeMsg:
		if msg.Path != m.nodePath {
			return m, nil // the cursor moved on
		}
		m.setNode(msg)
		return m, nil
	case settledMsg:
		m.settling = false
		if m.nodePath == "" || m.node != nil {
			return m, nil
		}
		return m, m.fetchNode(m.nodePath)
	case common.SnapshotMsg:
		m.snap = msg.Snapshot
		m.rebuildDetail()
		return m, nil
	case common.ChangesMsg:
		return m.changed(msg.Changes)
	case common.FilterMsg:
		m.list.SetFilter(msg.Text)
		m.refilter(nil)
		return m, m.cursorMoved()
	case common.CommandMsg:
		return m.command(msg.Name, msg.Arg)
	case WrittenMsg:
		if msg.Err != nil {
			return m, notice(fmt.Sprintf("%s %s failed: %v", msg.Op, msg.Path, msg.Err), true)
		}
		return m, tea.Batch(notice(fmt.Sprintf("%s %s: done", msg.Op, msg.Path), false), m.fetchChildren(m.dir))
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m Model) key(k tea.KeyPressMsg) (Model, tea.Cmd) {
	km := m.KeyMap
	switch {
	case key.Matches(k, km.NextPane, km.PrevPane):
		m.focus = 1 - m.focus
		if m.focus == 0 {
			m.list.Focus()
			m.detail.Blur()
		} else {
			m.list.Blur()
			m.detail.Focus()
		}
		return m, nil
	case key.Matches(k, km.Right, km.Open) && m.focus == 0:
		if name, ok := m.selectedName(); ok {
			return m, m.cd(path.Join(m.dir, name), "")
		}
		return m, nil
	case key.Matches(k, km.Left, km.Back) || k.String() == "backspace":
		if m.dir == "/" {
			return m, nil
		}
		return m, m.cd(path.Dir(m.dir), path.Base(m.dir))
	case key.Matches(k, km.Refresh):
		return m, tea.Batch(m.fetchChildren(m.dir), m.fetchNode(m.nodePath))
	case key.Matches(k, km.Delete):
		return m, m.askDelete()
	case key.Matches(k, km.Edit):
		return m, m.askSetData()
	}
	var cmd tea.Cmd
	if m.focus == 1 {
		m.detail, cmd = m.detail.Update(k)
		return m, cmd
	}
	before := m.list.Cursor()
	m.list, cmd = m.list.Update(k)
	if m.list.Cursor() != before {
		return m, tea.Batch(cmd, m.cursorMoved())
	}
	return m, cmd
}

// command handles ":cd PATH", ":set DATA", ":delete".
func (m Model) command(name, arg string) (Model, tea.Cmd) {
	switch name {
	case "cd", "tree", "go":
		p := strings.TrimSpace(arg)
		if p == "" {
			return m, m.cd("/", "")
		}
		if !strings.HasPrefix(p, "/") {
			p = path.Join(m.dir, p)
		}
		return m, m.cd(path.Clean(p), "")
	case "set":
		return m, m.confirmSetData(arg)
	case "delete", "rm":
		return m, m.askDelete()
	}
	return m, notice(fmt.Sprintf("unknown command %q (try :cd PATH, :set DATA, :delete, :locks, :servers, :q)", name), true)
}

// cd lists dir, putting the cursor on child selectOn when it arrives.
func (m *Model) cd(dir, selectOn string) tea.Cmd {
	m.dir, m.selectOn = dir, selectOn
	m.listing = inspect.Children{Path: dir}
	m.listErr, m.stale = "", false
	m.list.SetFilter("")
	m.refilter(nil)
	m.list.SetCursor(0)
	m.nodePath, m.node, m.nodeErr = "", nil, ""
	m.rebuildDetail()
	return m.fetchChildren(dir)
}

func (m *Model) fetchChildren(dir string) tea.Cmd {
	if m.src == nil {
		return nil
	}
	m.loading = true
	ctx, src := m.ctx, m.src
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		ch, err := src.Children(ctx, dir)
		sortChildren(ch.Names) // here, off the interface's goroutine
		return ChildrenMsg{Path: dir, Children: ch, Err: err}
	}
}

func (m Model) fetchNode(p string) tea.Cmd {
	if m.src == nil || p == "" {
		return nil
	}
	ctx, src := m.ctx, m.src
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		n, err := src.Node(ctx, p)
		return NodeMsg{Path: p, Node: n, Err: err}
	}
}

func (m Model) gotChildren(msg ChildrenMsg) (Model, tea.Cmd) {
	if msg.Path != m.dir {
		return m, nil
	}
	m.loading = false
	if msg.Err != nil {
		m.listErr = errText(msg.Err)
		m.listing = inspect.Children{Path: m.dir}
		m.refilter(nil)
		// The directory itself may still be readable: show its node.
		m.nodePath = m.dir
		return m, m.fetchNode(m.dir)
	}
	var keep string
	if m.selectOn == "" {
		keep, _ = m.selectedName()
	} else {
		keep, m.selectOn = m.selectOn, ""
	}
	m.listErr, m.stale = "", false
	m.listing = msg.Children
	var keepName func(int) bool
	if keep != "" {
		names := m.listing.Names
		keepName = func(i int) bool { return names[i] == keep }
	}
	m.refilter(keepName)
	return m, m.cursorMoved()
}

// changed reacts to watch notifications on what the view shows.
func (m Model) changed(cs []inspect.Change) (Model, tea.Cmd) {
	var cmds []tea.Cmd
	for _, c := range cs {
		switch {
		case c.Path == m.dir && c.Kind&inspect.ChangedDeleted != 0:
			cmds = append(cmds, m.cd(path.Dir(m.dir), path.Base(m.dir)),
				notice(m.dir+" was deleted", false))
		case c.Path == m.dir && c.Kind&inspect.ChangedChildren != 0:
			if len(m.listing.Names) > autoRefreshMax {
				m.stale = true
			} else {
				cmds = append(cmds, m.fetchChildren(m.dir))
			}
		}
		if c.Path == m.nodePath && c.Kind&(inspect.ChangedData|inspect.ChangedDeleted|inspect.ChangedCreated) != 0 {
			cmds = append(cmds, m.fetchNode(m.nodePath))
		}
	}
	return m, tea.Batch(cmds...)
}

// refilter shows the children that match the filter, the cursor on the
// one keep matches (keep may be nil).
func (m *Model) refilter(keep func(i int) bool) {
	names := m.listing.Names
	m.list.Refilter(filtertable.Items{
		N:     len(names),
		Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(names[i]), f) },
		Row:   m.row,
	}, keep)
}

// row shows a recipe node by its short name (recipe part and sequence)
// first, then the full name, dimmed.
func (m Model) row(i int) []string {
	name := m.listing.Names[i]
	if short := inspect.ShortName(name); short != name {
		return []string{short + "  " + m.Styles.Dim.Render(name)}
	}
	return []string{name}
}

// sortChildren orders names as a lock or queue is ordered: names with a
// sequence suffix by the sequence (the GUID prefixes of protected names are
// random), after the others, which are sorted by name.
func sortChildren(names []string) {
	type key struct {
		name string
		seq  int64
		ok   bool
	}
	keys := make([]key, len(names))
	for i, n := range names {
		keys[i].name = n
		if p, ok := recipes.ParseNode(n); ok && p.Seq >= 0 {
			keys[i].seq, keys[i].ok = p.Seq, true
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		switch {
		case a.ok != b.ok:
			if a.ok {
				return 1
			}
			return -1
		case a.ok && a.seq != b.seq:
			return cmp.Compare(a.seq, b.seq)
		}
		return strings.Compare(a.name, b.name)
	})
	for i, k := range keys {
		names[i] = k.name
	}
}

func (m Model) selectedName() (string, bool) {
	i, ok := m.list.Selected()
	if !ok {
		return "", false
	}
	return m.listing.Names[i], true
}

// cursorMoved schedules a read of the node under the cursor: settle after
// the first move, of whatever node is under the cursor then, so that holding
// a key down, or a listing that changes under the cursor many times a
// second, reads at most one node per settle.
func (m *Model) cursorMoved() tea.Cmd {
	name, ok := m.selectedName()
	if !ok {
		m.nodePath, m.node, m.nodeErr = "", nil, ""
		m.rebuildDetail()
		return nil
	}
	p := path.Join(m.dir, name)
	if p == m.nodePath {
		return nil // already shown, or its read is on its way
	}
	m.nodePath, m.node, m.nodeErr = p, nil, ""
	m.rebuildDetail()
	if m.settling {
		return nil
	}
	m.settling = true
	return tea.Tick(settle, func(time.Time) tea.Msg { return settledMsg{} })
}

func (m *Model) setNode(msg NodeMsg) {
	if msg.Err != nil {
		m.node, m.nodeErr = nil, errText(msg.Err)
	} else {
		n := msg.Node
		m.node, m.nodeErr = &n, ""
		m.decoded = inspect.Decode(n.Data, 0, 0)
	}
	m.detail.GotoTop()
	m.rebuildDetail()
}

func errText(err error) string {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "gone: the node was deleted"
	case errors.Is(err, inspect.ErrNoAccess):
		return "no access: the node's ACL denies this session (see --auth)"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out: no member answered in time"
	}
	return err.Error()
}

// rebuildDetail lays out the node pane's lines for the current width.
func (m *Model) rebuildDetail() {
	w := max(m.detail.Width, 1)
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	s := m.Styles
	switch {
	case m.nodePath == "":
		add(s.Dim.Render("no node selected"))
	case m.nodeErr != "":
		add(s.Title.Render(m.nodePath))
		add(s.Bad.Render(m.nodeErr))
	case m.node == nil:
		add(s.Title.Render(m.nodePath))
		add(s.Dim.Render("reading…"))
	default:
		lines = m.nodeLines(w)
	}
	m.detail.SetLines(lines)
}

func (m Model) nodeLines(w int) []string {
	n := m.node
	st := n.Stat
	s := m.Styles
	lines := []string{s.Title.Render(n.Path)}
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	kind := "persistent"
	if st.EphemeralOwner != 0 {
		kind = "ephemeral"
	}
	add("%s · %s · %s", common.Bytes(int64(st.DataLength)), common.Plural(int(st.NumChildren), "child", "children"), kind)
	if st.EphemeralOwner != 0 {
		owner := "owner " + inspect.SessionHex(st.EphemeralOwner)
		if m.snap != nil {
			if sess, ok := m.snap.Cluster.Session(st.EphemeralOwner); ok && sess.Member != "" {
				owner += fmt.Sprintf(" %s via %s", sess.Endpoint, sess.Member)
			} else if ok {
				owner += " (connected to no member)"
			}
		}
		add("%s", owner)
	}
	add("version %d · cversion %d · aversion %d", st.Version, st.Cversion, st.Aversion)
	add("created  %s", st.Ctime.Format("2006-01-02 15:04:05.000"))
	add("modified %s", st.Mtime.Format("2006-01-02 15:04:05.000"))
	add("czxid 0x%x · mzxid 0x%x · pzxid 0x%x", st.Czxid, st.Mzxid, st.Pzxid)
	switch {
	case n.ACLErr != "":
		add("acl %s", n.ACLErr)
	default:
		acl := make([]string, len(n.ACL))
		for i, a := range n.ACL {
			acl[i] = a.String()
		}
		add("acl %s", strings.Join(acl, ", "))
	}
	if n.NoAccess {
		add("%s", s.Bad.Render("data: no access (the ACL denies read to this session)"))
		return lines
	}
	d := m.decoded
	head := fmt.Sprintf("data: %s, %s", d.Kind, common.Bytes(int64(d.Total)))
	if d.Truncated() {
		head += fmt.Sprintf(", first %s shown", common.Bytes(int64(d.Shown)))
	}
	lines = append(lines, s.Label.Render(head))
	if d.Kind == inspect.DataBinary {
		perLine := 16
		switch {
		case w < 45:
			perLine = 4
		case w < 78:
			perLine = 8
		}
		return append(lines, inspect.HexDump(n.Data[:d.Shown], perLine)...)
	}
	for _, l := range d.Lines {
		if ansi.StringWidth(l) <= w {
			lines = append(lines, l)
			continue
		}
		lines = append(lines, strings.Split(ansi.Hardwrap(l, w, true), "\n")...)
	}
	return lines
}

// askDelete asks to delete the node under the cursor.
func (m Model) askDelete() tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	p, version := m.nodePath, int32(-1)
	if m.node != nil {
		version = m.node.Stat.Version
	}
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		return common.ConfirmMsg{
			Prompt: fmt.Sprintf("delete %s (version %d)? y/N", p, version),
			Yes: func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, requestTimeout)
				defer cancel()
				return WrittenMsg{Op: "delete", Path: p, Err: src.Delete(ctx, p, version)}
			},
		}
	}
}

// askSetData asks for the new data of the node under the cursor.
func (m Model) askSetData() tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	p := m.nodePath
	initial := ""
	if m.node != nil && m.decoded.Kind == inspect.DataText && !m.decoded.Truncated() && len(m.decoded.Lines) == 1 {
		initial = m.decoded.Lines[0]
	}
	return func() tea.Msg {
		return common.PromptMsg{Prompt: "set data of " + p + ": ", Initial: initial, Command: "set"}
	}
}

// confirmSetData asks to write data to the node under the cursor.
func (m Model) confirmSetData(data string) tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	p, version := m.nodePath, int32(-1)
	if m.node != nil {
		version = m.node.Stat.Version
	}
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		return common.ConfirmMsg{
			Prompt: fmt.Sprintf("set data of %s (version %d) to %s? y/N", p, version, common.Bytes(int64(len(data)))),
			Yes: func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, requestTimeout)
				defer cancel()
				return WrittenMsg{Op: "set data of", Path: p, Err: src.SetData(ctx, p, []byte(data), version)}
			},
		}
	}
}

func (m Model) refuseWrite() tea.Cmd {
	switch {
	case m.src == nil || !m.src.Writable():
		return notice("read-only: start zkherd inspect with --allow-writes to delete or set data", true)
	case m.nodePath == "" || m.nodePath == "/":
		return notice("select a node first", true)
	}
	return nil
}

func notice(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return common.NoticeMsg{Text: text, Error: isErr} }
}

// View draws the view, exactly Height lines.
func (m Model) View() string {
	s := m.Styles
	head := s.Title.Render("Tree") + "  " + m.dir
	switch {
	case m.loading && len(m.listing.Names) == 0:
		head += " · listing…"
	case m.listErr == "":
		head += " · " + common.Plural(len(m.listing.Names), "child", "children")
		if f := m.list.Filter(); f != "" {
			head += fmt.Sprintf(" (%s match %q)", common.Count(int64(m.list.Shown())), f)
		}
	}
	if m.stale {
		head += " · " + s.Warn.Render("changed: r to refresh")
	}
	list := m.list.View()
	switch {
	case m.listErr != "":
		list = common.Lines(s.Bad.Render(m.listErr), m.list.Width, m.list.Height)
	case len(m.listing.Names) == 0 && !m.loading:
		list = common.Lines(s.Dim.Render("(no children)"), m.list.Width, m.list.Height)
	}
	var body string
	if m.sideBySide() {
		sep := strings.TrimSuffix(strings.Repeat(s.Dim.Render("│")+"\n", m.list.Height), "\n")
		body = joinColumns(list, sep, m.detail.View())
	} else {
		body = list + "\n" + s.Dim.Render(strings.Repeat("─", m.Width)) + "\n" + m.detail.View()
	}
	return common.Lines(common.Fit(head, m.Width)+"\n"+body, m.Width, m.Height)
}

// joinColumns puts blocks of equal height side by side.
func joinColumns(blocks ...string) string {
	split := make([][]string, len(blocks))
	n := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		n = max(n, len(split[i]))
	}
	var out strings.Builder
	for r := 0; r < n; r++ {
		if r > 0 {
			out.WriteByte('\n')
		}
		for _, lines := range split {
			if r < len(lines) {
				out.WriteString(lines[r])
			}
		}
	}
	return out.String()
}
