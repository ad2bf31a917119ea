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
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui/bookmarks"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/components/pager"
	"github.com/zkherd/zkherd/tui/components/table"
	"github.com/zkherd/zkherd/tui/styles"
)

// Timing and size limits.
const (
	// settle is how long the cursor must rest on a node before it is read.
	settle = 120 * time.Millisecond
	// requestTimeout bounds each read.
	requestTimeout = 10 * time.Second
	// treeTimeout bounds counting and deleting a subtree: one request per
	// node counted (50,000 leaves take seconds), a multi per 1,000 deleted.
	treeTimeout = 2 * time.Minute
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
	Create(ctx context.Context, path string, data []byte, mode inspect.CreateMode) (string, error)
	SetACL(ctx context.Context, path string, acl []zk.ACL, aversion int32) error
	PlanDelete(ctx context.Context, path string) (inspect.DeletePlan, error)
	DeleteTree(ctx context.Context, path string) (int, error)
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

// WrittenMsg is the result of a write.
type WrittenMsg struct {
	Op, Path string
	Err      error
	// Done, when set, replaces "OP PATH: done" in the notice; Why, when
	// set, replaces "OP PATH failed: ERR".
	Done, Why string
	// Kept is the file holding an edit that was not written.
	Kept string
}

// plannedMsg is what deleting a node would remove (inspect.PlanDelete).
type plannedMsg struct {
	Plan inspect.DeletePlan
	Err  error
}

// editedMsg is the editor's result: the file's content after it exited.
// File is the edited copy, kept until the write succeeds.
type editedMsg struct {
	Path    string
	Version int32
	Before  []byte
	After   []byte
	File    string
	Err     error
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
	// dataLines are the node's data as drawn at dataWidth: computed once
	// per node and width (a 1 MB node is 65,536 hex lines), not per frame.
	dataLines []string
	dataWidth int
	// dirSeen is true once the directory listed has been listed: a
	// missing node is then "gone", else "no such node".
	dirSeen  bool
	settling bool // a settledMsg is on its way
	detail   pager.Model
	focus    int // 0 list, 1 detail

	snap *inspect.Snapshot // for the ephemeral owner's endpoint

	// deleting is the delete waiting for the user to type its path or
	// count; its warnings head the node pane meanwhile.
	deleting *pendingDelete
	// kept maps a node to the file holding the user's edit of it that was
	// not written (shown with the node until the inspector exits).
	kept map[string]string
	// marks are the user's bookmarks (nil: none in this screen).
	marks *bookmarks.Store
}

// pendingDelete is a checked delete and what it would break.
type pendingDelete struct {
	plan  inspect.DeletePlan
	roles []string
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

// WithBookmarks lets b bookmark nodes in store.
func (m Model) WithBookmarks(store *bookmarks.Store) Model {
	m.marks = store
	return m
}

// bookmark adds the node under the cursor to the bookmarks, or removes it.
func (m Model) bookmark() tea.Cmd {
	p := cmp.Or(m.nodePath, m.dir)
	if m.marks == nil {
		return notice("no bookmarks in this screen", true)
	}
	added, err := m.marks.Toggle(p)
	text := "bookmarked " + p + " (:bookmarks lists them)"
	if !added {
		text = "removed the bookmark of " + p
	}
	if err != nil {
		return tea.Batch(notice(text+", for this session only: "+err.Error(), true), changedMarks)
	}
	return tea.Batch(notice(text, false), changedMarks)
}

func changedMarks() tea.Msg { return common.BookmarksMsg{} }

// Init lists the root.
func (m Model) Init() tea.Cmd { return m.fetchChildren("/") }

// Title names the view in the tab bar.
func (m Model) Title() string { return "Tree" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	km := m.KeyMap
	b := []key.Binding{km.Right, km.Left, km.NextPane, km.Filter, keyCopy, km.Session, keyBookmark}
	if m.src != nil && m.src.Writable() {
		b = append(b, keyCreate, km.Edit, km.Delete, keyACL)
	}
	return b
}

// Dir is the directory listed.
func (m Model) Dir() string { return m.dir }

// Place is the directory listed (a move is another directory) and the node
// under the cursor in it, to come back to (common.Component); the
// directory itself, with a trailing slash, when no child is under the
// cursor (a leaf entered, an empty directory).
func (m Model) Place() (location, target string) {
	if m.nodePath != "" && m.nodePath != m.dir && path.Dir(m.nodePath) == m.dir {
		return m.dir, m.nodePath
	}
	return m.dir, strings.TrimSuffix(m.dir, "/") + "/"
}

// show lists p's parent with the cursor on p, whose node the pane shows:
// where a drill-down from a lock, a session or a queue lands. A path
// ending in a slash is listed itself (Place).
func (m *Model) show(p string) tea.Cmd {
	if strings.HasSuffix(p, "/") {
		return m.cd(path.Clean("/"+p), "")
	}
	p = path.Clean("/" + p)
	if p == "/" {
		return m.cd("/", "")
	}
	return m.cd(path.Dir(p), path.Base(p))
}

// ownerSession drills down to the session owning the ephemeral node
// under the cursor, with its watches and other ephemerals.
func (m Model) ownerSession() tea.Cmd {
	n := m.node
	switch {
	case n == nil || n.Path != m.nodePath:
		return notice("the node is still being read: try again in a moment", true)
	case n.Stat.EphemeralOwner == 0:
		return notice(n.Path+" is persistent: no session owns it", true)
	}
	target := inspect.SessionHex(n.Stat.EphemeralOwner)
	return func() tea.Msg { return common.GotoMsg{View: "sessions", Target: target} }
}

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
	case common.BookmarksMsg:
		m.rebuildDetail() // the ★ of a bookmarked node
		return m, nil
	case common.ChangesMsg:
		return m.changed(msg.Changes)
	case common.FilterMsg:
		// The cursor stays on the node it was on, if still shown.
		var keep func(int) bool
		if name, ok := m.selectedName(); ok {
			names := m.listing.Names
			keep = func(i int) bool { return names[i] == name }
		}
		m.list.SetFilter(msg.Text)
		m.refilter(keep)
		return m, m.cursorMoved()
	case common.CommandMsg:
		return m.command(msg.Name, msg.Arg)
	case common.ShowMsg:
		return m, m.show(msg.Target)
	case WrittenMsg:
		if msg.Kept != "" {
			if m.kept == nil {
				m.kept = map[string]string{}
			}
			m.kept[msg.Path] = msg.Kept
			m.rebuildDetail()
		}
		if msg.Err != nil {
			text := cmp.Or(msg.Why, fmt.Sprintf("%s %s failed: %s", msg.Op, msg.Path, writeErrText(msg.Err)))
			return m, tea.Batch(notice(text, true), m.fetchNode(m.nodePath))
		}
		done := msg.Done
		if done == "" {
			done = fmt.Sprintf("%s %s: done", msg.Op, msg.Path)
		}
		return m, tea.Batch(notice(done, false), m.fetchChildren(m.dir), m.fetchNode(m.nodePath))
	case plannedMsg:
		return m.confirmDelete(msg)
	case editedMsg:
		return m, m.confirmEdit(msg)
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
	case key.Matches(k, km.Left, km.Back):
		if m.dir == "/" {
			return m, nil
		}
		return m, m.cd(path.Dir(m.dir), path.Base(m.dir))
	case key.Matches(k, km.Refresh):
		return m, tea.Batch(m.fetchChildren(m.dir), m.fetchNode(m.nodePath))
	case key.Matches(k, km.Delete):
		return m, m.askDelete()
	case key.Matches(k, km.Edit):
		return m, m.edit()
	case key.Matches(k, keyCreate):
		return m, m.askCreate()
	case key.Matches(k, keyCopy):
		return m, m.copyPath()
	case key.Matches(k, keyACL):
		return m, m.askACL()
	case key.Matches(k, km.Session):
		return m, m.ownerSession()
	case key.Matches(k, keyBookmark):
		return m, m.bookmark()
	}
	var cmd tea.Cmd
	switch {
	case m.focus == 1:
		m.detail, cmd = m.detail.Update(k)
		return m, cmd
	case m.list.Shown() == 0:
		// With no children listed, the keys page the node's data.
		d := m.detail
		d.Focus()
		d, cmd = d.Update(k)
		d.Blur()
		m.detail = d
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
	case "delete", "rm", "deleteall", "rmr":
		return m, m.askDelete()
	case cmdConfirmDelete:
		return m.typedDelete(arg)
	case cmdCancelDelete:
		m.deleting = nil
		m.rebuildDetail()
		return m, notice("not deleted", false)
	case "create":
		return m, m.confirmCreate(arg)
	case "setacl":
		return m, m.confirmSetACL(arg)
	case "edit":
		return m, m.edit()
	case "copy", "yank":
		return m, m.copyPath()
	}
	return m, notice(fmt.Sprintf("unknown command %q (try :cd PATH, :create [-e] [-s] PATH [DATA], :edit, :set DATA, :setacl ACL, :delete, :copy, :locks, :q)", name), true)
}

// cd lists dir, putting the cursor on child selectOn when it arrives.
func (m *Model) cd(dir, selectOn string) tea.Cmd {
	if dir != m.dir {
		m.dirSeen = false
	}
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
		m.listErr = m.missingText(msg.Err, m.dir, m.dirSeen)
		m.listing = inspect.Children{Path: m.dir}
		m.refilter(nil)
		if errors.Is(msg.Err, zk.ErrNoNode) {
			m.nodePath, m.node, m.nodeErr = "", nil, ""
			m.rebuildDetail()
			return m, nil
		}
		// The directory itself may still be readable: show its node.
		m.nodePath, m.node, m.nodeErr = m.dir, nil, ""
		m.rebuildDetail()
		return m, m.fetchNode(m.dir)
	}
	m.dirSeen = true
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
// one keep matches (keep may be nil). The row function closes over
// nameRows, never over the Model: a Model copy holds the list, whose
// previous row function holds the previous copy, and so on back to every
// listing and snapshot ever received.
func (m *Model) refilter(keep func(i int) bool) {
	names := m.listing.Names
	m.list.Refilter(filtertable.Items{
		N:     len(names),
		Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(names[i]), f) },
		Row:   nameRows{names: names, styles: m.Styles}.row,
	}, keep)
}

// nameRows is what the list's rows are drawn from.
type nameRows struct {
	names  []string
	styles *styles.Styles
}

// row shows a recipe node by its short name (recipe part and sequence)
// first, then the full name, dimmed.
func (r nameRows) row(i int) []string {
	name := r.names[i]
	if short := inspect.ShortName(name); short != name {
		return []string{short + "  " + r.styles.Dim.Render(name)}
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
	p := path.Join(m.dir, name)
	switch {
	case !ok && m.listErr != "":
		return nil
	case !ok && m.loading:
		m.nodePath, m.node, m.nodeErr = "", nil, ""
		m.rebuildDetail()
		return nil
	case !ok:
		// A leaf (or a filter matching nothing): show the node itself, as
		// zkCli's get does.
		p = m.dir
	}
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
	samePath := m.node != nil && m.node.Path == msg.Path
	if msg.Err != nil {
		// A node read from a listing was seen: missing now means deleted.
		m.node, m.nodeErr = nil, m.missingText(msg.Err, msg.Path, msg.Path != m.dir || m.dirSeen)
	} else {
		n := msg.Node
		m.node, m.nodeErr = &n, ""
		// All of it: the pager shows any part, and the lines are built
		// once per node, not per frame.
		m.decoded = inspect.Decode(n.Data, len(n.Data)+1, len(n.Data)+1)
	}
	m.dataLines, m.dataWidth = nil, 0
	if !samePath {
		m.detail.GotoTop()
	}
	m.rebuildDetail()
}

// missingText explains err for path; a node that does not exist was
// "gone" if the view had seen it, else it never existed.
func (m Model) missingText(err error, p string, seen bool) string {
	if errors.Is(err, zk.ErrNoNode) {
		if seen {
			return "gone: " + p + " was deleted"
		}
		return "no such node: " + p
	}
	return errText(err)
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
	return plainErr(err)
}

// plainErr drops the package prefixes ("inspect: ", "zk: ") a user need
// not see.
func plainErr(err error) string {
	s := err.Error()
	for _, p := range []string{"inspect: ", "zk: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// writeErrText explains why a write failed, with what to do.
func writeErrText(err error) string {
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		return "the node changed since it was read (version check): nothing written; look again and retry"
	case errors.Is(err, zk.ErrNodeExists):
		return "a node of that name exists already"
	case errors.Is(err, zk.ErrNotEmpty):
		return "it has children (d deletes them too, after counting them)"
	case errors.Is(err, zk.ErrNoChildrenForEphemerals):
		return "an ephemeral node cannot have children"
	case errors.Is(err, zk.ErrNoNode):
		return "no such node (or its parent does not exist)"
	}
	return errText(err)
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
		if m.dataLines == nil || m.dataWidth != w {
			m.dataLines, m.dataWidth = buildDataLines(m.node, m.decoded, w), w
		}
		lines = m.nodeLines(w)
	}
	if d := m.deleting; d != nil {
		banner := []string{s.Bad.Render(fmt.Sprintf("about to delete %s: %s", d.plan.Path, common.Plural(d.plan.Count, "node", "nodes")))}
		for _, r := range d.roles {
			banner = append(banner, strings.Split(s.Bad.Render(ansi.Wrap("! "+r, w, " ")), "\n")...)
		}
		if d.plan.Unsure != "" {
			banner = append(banner, s.Warn.Render(d.plan.Unsure))
		}
		lines = append(append(banner, ""), lines...)
	}
	m.detail.SetLines(lines)
}

func (m Model) nodeLines(w int) []string {
	n := m.node
	st := n.Stat
	s := m.Styles
	title := s.Title.Render(n.Path)
	if m.marks != nil && m.marks.Has(n.Path) {
		title += " ★"
	}
	lines := []string{title}
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	if f, ok := m.kept[n.Path]; ok {
		lines = append(lines, strings.Split(s.Warn.Render(ansi.Wrap("your edit that was not written is kept in "+f+" (e edits the node's data as it is now)", w, " /")), "\n")...)
	}
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
	return append(lines, m.dataLines...)
}

// buildDataLines draws the node's data for width w: hex 16 bytes a line
// (xxd's compact form where the classic one does not fit), text wrapped,
// control characters shown as their Unicode pictures (a tab as ␉).
func buildDataLines(n *inspect.Node, d inspect.Decoded, w int) []string {
	if d.Kind == inspect.DataBinary {
		switch {
		case w >= 78:
			return inspect.HexDump(n.Data[:d.Shown], 16)
		case w >= 67:
			return inspect.HexDumpCompact(n.Data[:d.Shown])
		}
		return inspect.HexDump(n.Data[:d.Shown], 8)
	}
	lines := make([]string, 0, len(d.Lines))
	for _, l := range d.Lines {
		if ansi.StringWidth(l) <= w {
			lines = append(lines, l)
			continue
		}
		lines = append(lines, strings.Split(ansi.Hardwrap(l, w, true), "\n")...)
	}
	return lines
}

// Keys of the Tree view's own (the shared key map has d and e).
var (
	keyCreate = key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "create"))
	keyCopy   = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy path"))
	keyACL    = key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "set ACL"))
	// keyBookmark bookmarks the node under the cursor, or removes it.
	keyBookmark = key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "bookmark"))
)

// The commands the delete prompt answers with. Their names hold a space,
// which a name typed after ":" never does (the first word is the name).
const (
	cmdConfirmDelete = "delete confirmed"
	cmdCancelDelete  = "delete cancelled"
)

// askDelete checks what deleting the node under the cursor would remove
// and whether this session may (plannedMsg).
func (m Model) askDelete() tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	p := m.nodePath
	src, ctx := m.src, m.ctx
	return tea.Batch(notice("checking what deleting "+p+" would remove…", false), func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, treeTimeout)
		defer cancel()
		plan, err := src.PlanDelete(ctx, p)
		return plannedMsg{Plan: plan, Err: err}
	})
}

// confirmDelete asks the user to type the node's path or the number of
// nodes to delete: no single key (y is also copy-path) deletes anything.
// What the node is to the recipes on it (a live holder, a leader, a
// lease) heads the node pane meanwhile.
func (m Model) confirmDelete(msg plannedMsg) (Model, tea.Cmd) {
	c := msg.Plan
	switch {
	case msg.Err != nil:
		return m, notice(fmt.Sprintf("delete %s: %s", c.Path, writeErrText(msg.Err)), true)
	case c.Refused != "":
		return m, notice(fmt.Sprintf("not deleted: %s: %s", c.Path, c.Refused), true)
	}
	m.deleting = &pendingDelete{plan: c, roles: m.snap.RolesAt(c.Path)}
	m.rebuildDetail()
	what := fmt.Sprintf("delete %s (version %d, no children)", c.Path, c.Version)
	if c.Count > 1 {
		what = fmt.Sprintf("delete %s and everything under it: %s nodes", c.Path, common.Count(int64(c.Count)))
	}
	if len(m.deleting.roles) > 0 {
		what += " (in use: see above)"
	}
	prompt := fmt.Sprintf("%s? type %d or the path, enter deletes, esc cancels: ", what, c.Count)
	return m, func() tea.Msg {
		return common.PromptMsg{Prompt: prompt, Command: cmdConfirmDelete, CancelCommand: cmdCancelDelete}
	}
}

// typedDelete deletes the pending node if the user typed its path or count.
func (m Model) typedDelete(typed string) (Model, tea.Cmd) {
	d := m.deleting
	m.deleting = nil
	m.rebuildDetail()
	if d == nil {
		return m, notice("nothing to delete: press d on a node first", true)
	}
	c := d.plan
	typed = strings.TrimSpace(typed)
	count := strconv.Itoa(c.Count)
	if typed != c.Path && typed != count && typed != common.Count(int64(c.Count)) {
		return m, notice(fmt.Sprintf("not deleted: %q is neither %s nor %s", typed, count, c.Path), true)
	}
	src, ctx := m.src, m.ctx
	if c.Count == 1 {
		return m, func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, requestTimeout)
			defer cancel()
			return WrittenMsg{Op: "delete", Path: c.Path, Err: src.Delete(ctx, c.Path, c.Version), Done: "deleted " + c.Path}
		}
	}
	return m, func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, treeTimeout)
		defer cancel()
		n, err := src.DeleteTree(ctx, c.Path)
		return WrittenMsg{Op: "delete", Path: c.Path, Err: err,
			Done: fmt.Sprintf("deleted %s: %s nodes", c.Path, common.Count(int64(n)))}
	}
}

// edit opens the node's data in $VISUAL or $EDITOR (vi by default) in a
// temporary file, removed afterwards; editedMsg carries the result.
func (m Model) edit() tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	n := m.node
	switch {
	case n == nil || n.Path != m.nodePath:
		return notice("the node is still being read: try again in a moment", true)
	case n.NoAccess:
		return notice("no access: the node's ACL denies reading its data (see --auth)", true)
	}
	p, version, before := n.Path, n.Stat.Version, slices.Clone(n.Data)
	ext := ".txt"
	if m.decoded.Kind == inspect.DataJSON {
		ext = ".json"
	}
	f, err := os.CreateTemp("", "zkherd-edit-*"+ext)
	if err != nil {
		return notice("edit: cannot write a temporary file: "+err.Error(), true)
	}
	name := f.Name()
	_, err = f.Write(before)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return notice("edit: cannot write a temporary file: "+err.Error(), true)
	}
	editor := cmp.Or(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi")
	// Through the shell, so that EDITOR may carry arguments ("code -w").
	c := exec.Command("sh", "-c", editor+` "$1"`, "sh", name)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		if err != nil {
			os.Remove(name)
			return editedMsg{Path: p, Err: fmt.Errorf("the editor (%s) failed: %w", editor, err)}
		}
		after, err := os.ReadFile(name)
		if err != nil {
			os.Remove(name)
		}
		return editedMsg{Path: p, Version: version, Before: before, After: after, File: name, Err: err}
	})
}

// editorNewline drops the one newline an editor adds at the end of a file
// (vi and nano always end the last line) when the data had none: saving
// 5432 unchanged must not write "5432\n". A newline the user typed is
// kept: they typed an empty last line, of which one newline stays.
func editorNewline(before, after []byte) ([]byte, bool) {
	if bytes.HasSuffix(before, []byte("\n")) || !bytes.HasSuffix(after, []byte("\n")) {
		return after, false
	}
	return after[:len(after)-1], true
}

// confirmEdit asks to write the edited data, if it changed, with the
// version read before editing: a node changed meanwhile is refused, and
// the edited copy is kept (its path shown, as kubectl edit does) whenever
// it was not written.
func (m Model) confirmEdit(e editedMsg) tea.Cmd {
	if e.Err != nil {
		return notice("edit "+e.Path+": "+plainErr(e.Err), true)
	}
	after, dropped := editorNewline(e.Before, e.After)
	if bytes.Equal(e.Before, after) {
		os.Remove(e.File)
		return notice("no change to "+e.Path+": nothing written", false)
	}
	src, ctx := m.src, m.ctx
	prompt := fmt.Sprintf("set data of %s (if still version %d): %s -> %s", e.Path, e.Version,
		common.Bytes(int64(len(e.Before))), common.Bytes(int64(len(after))))
	if dropped {
		prompt += " (the newline the editor added at the end dropped)"
	}
	return func() tea.Msg {
		return common.ConfirmMsg{
			Prompt: prompt + "? y/N",
			Yes: func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, requestTimeout)
				defer cancel()
				w := WrittenMsg{Op: "set data of", Path: e.Path, Err: src.SetData(ctx, e.Path, after, e.Version), Done: "wrote " + e.Path}
				switch {
				case w.Err == nil:
					os.Remove(e.File)
				case errors.Is(w.Err, zk.ErrBadVersion):
					w.Why, w.Kept = fmt.Sprintf("not written, %s changed since it was opened: your edit is kept in %s", e.Path, e.File), e.File
				default:
					w.Why, w.Kept = fmt.Sprintf("set data of %s failed: %s; your edit is kept in %s", e.Path, writeErrText(w.Err), e.File), e.File
				}
				return w
			},
			No: func() tea.Msg {
				os.Remove(e.File)
				return nil
			},
		}
	}
}

// confirmSetData asks to write data to the node under the cursor.
func (m Model) confirmSetData(data string) tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	p, version := m.nodePath, int32(-1)
	if m.node != nil && m.node.Path == p {
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

// askCreate prompts for the node to create, in zkCli's form.
func (m Model) askCreate() tea.Cmd {
	if m.src == nil || !m.src.Writable() {
		return m.refuseWrite()
	}
	return func() tea.Msg {
		return common.PromptMsg{Prompt: "create [-e] [-s] NAME [DATA] in " + m.dir + ": ", Command: "create"}
	}
}

// confirmCreate parses "[-e] [-s] PATH [DATA]" (PATH relative to the
// directory listed unless absolute) and asks to create it.
func (m Model) confirmCreate(arg string) tea.Cmd {
	if m.src == nil || !m.src.Writable() {
		return m.refuseWrite()
	}
	var mode inspect.CreateMode
	rest := strings.TrimSpace(arg)
	for {
		flag, after, _ := strings.Cut(rest, " ")
		if flag == "-e" {
			mode.Ephemeral = true
		} else if flag == "-s" {
			mode.Sequential = true
		} else {
			break
		}
		rest = strings.TrimSpace(after)
	}
	name, data, _ := strings.Cut(rest, " ")
	if name == "" {
		return notice("create: give a name: c, then [-e] [-s] NAME [DATA]", true)
	}
	p := name
	if !strings.HasPrefix(p, "/") {
		p = path.Join(m.dir, p)
	}
	p = path.Clean(p)
	what := fmt.Sprintf("create %s (%s) with %s of data", p, mode, common.Bytes(int64(len(data))))
	if mode.Ephemeral {
		what += " (ephemeral: removed when this inspector exits)"
	}
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		return common.ConfirmMsg{
			Prompt: what + "? y/N",
			Yes: func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, requestTimeout)
				defer cancel()
				made, err := src.Create(ctx, p, []byte(data), mode)
				return WrittenMsg{Op: "create", Path: p, Err: err, Done: "created " + made}
			},
		}
	}
}

// askACL prompts for the node's new ACL, starting from the current one.
func (m Model) askACL() tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	initial := ""
	if n := m.node; n != nil && n.Path == m.nodePath {
		parts := make([]string, len(n.ACL))
		for i, a := range n.ACL {
			parts[i] = a.Scheme + ":" + a.ID + ":" + a.Perms
		}
		initial = strings.Join(parts, ",")
	}
	p := m.nodePath
	return func() tea.Msg {
		return common.PromptMsg{Prompt: "ACL of " + p + " (scheme:id:perms,...): ", Initial: initial, Command: "setacl"}
	}
}

// confirmSetACL parses an ACL and asks to set it on the node under the
// cursor, checked against the ACL version read.
func (m Model) confirmSetACL(arg string) tea.Cmd {
	if cmd := m.refuseWrite(); cmd != nil {
		return cmd
	}
	acl, err := inspect.ParseACL(arg)
	if err != nil {
		return notice(plainErr(err), true)
	}
	p, aversion := m.nodePath, int32(-1)
	if m.node != nil && m.node.Path == p {
		aversion = m.node.Stat.Aversion
	}
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		return common.ConfirmMsg{
			Prompt: fmt.Sprintf("set the ACL of %s (aversion %d) to %s? y/N", p, aversion, strings.TrimSpace(arg)),
			Yes: func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, requestTimeout)
				defer cancel()
				return WrittenMsg{Op: "set the ACL of", Path: p, Err: src.SetACL(ctx, p, acl, aversion)}
			},
		}
	}
}

// copyPath puts the path under the cursor on the clipboard (OSC 52, which
// works over ssh when the terminal allows it) and shows it.
func (m Model) copyPath() tea.Cmd {
	p := m.nodePath
	if p == "" {
		p = m.dir
	}
	return tea.Batch(tea.SetClipboard(p), notice("copied "+p+" (to the clipboard, if the terminal allows OSC 52)", false))
}

func (m Model) refuseWrite() tea.Cmd {
	switch {
	case m.src == nil || !m.src.Writable():
		return notice("read-only: start zkherd inspect with --allow-writes to change nodes", true)
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
