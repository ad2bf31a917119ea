package tree

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/go-zookeeper/zk"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/tui/common"
)

// The selected node's detail pane: its stat, data and ACL, and the errors
// shown in its place.

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
	return m.errText(err)
}

// advice is a notice naming the inputs written {name} in format as the
// source's command calls them (Source.InputName); bare without a source.
func (m Model) advice(format string, args ...any) string {
	var name func(string) string
	if m.src != nil {
		name = m.src.InputName
	}
	return exit.Advice(name, format, args...)
}

func (m Model) errText(err error) string {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "gone: the node was deleted"
	case errors.Is(err, inspect.ErrNoAccess):
		return m.advice("no access: the node's ACL denies this session (see {auth})")
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
func (m Model) writeErrText(err error) string {
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
	return m.errText(err)
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
