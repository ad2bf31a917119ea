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
	"fmt"
	"path"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/bookmarks"
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
	// InputName names a value the user gave ("auth") as the command
	// calls it (inspect.Inspector.InputName): the view never names a flag.
	InputName(input string) string
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
			text := cmp.Or(msg.Why, fmt.Sprintf("%s %s failed: %s", msg.Op, msg.Path, m.writeErrText(msg.Err)))
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
