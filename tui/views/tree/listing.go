package tree

import (
	"cmp"
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/go-zookeeper/zk"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui/components/filtertable"
	"github.com/zkherd/zkherd/tui/styles"
)

// The directory listing: moving between directories, fetching and sorting
// children, filtering, the cursor.

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
