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

	tea "charm.land/bubbletea/v2"

	"charm.land/bubbles/v2/key"
	"github.com/go-zookeeper/zk"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
)

// Writes from the Tree view (when writes are allowed): delete, edit and set
// data, create, set an ACL, each asked and confirmed first.

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
		return m, notice(fmt.Sprintf("delete %s: %s", c.Path, m.writeErrText(msg.Err)), true)
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
		return notice(m.advice("no access: the node's ACL denies reading its data (see {auth})"), true)
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
					w.Why, w.Kept = fmt.Sprintf("set data of %s failed: %s; your edit is kept in %s", e.Path, m.writeErrText(w.Err), e.File), e.File
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
		return notice(m.advice("read-only: start zkherd inspect with {allow-writes} to change nodes"), true)
	case m.nodePath == "" || m.nodePath == "/":
		return notice("select a node first", true)
	}
	return nil
}

func notice(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return common.NoticeMsg{Text: text, Error: isErr} }
}
