package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestInspectDeleteSafetyInTmux drives the Tree view's writes that can
// destroy, as a user would (issue 26, finding 6): y, also the copy-path
// key, deletes nothing; the live holder of a lock is named as such before
// its node is deleted, which takes typing the count; a node whose parent
// denies this session DELETE is refused in words; a node whose own ACL
// denies READ is deleted, as ZooKeeper allows; and an editor's trailing
// newline does not turn 5432 into "5432\n".
func TestInspectDeleteSafetyInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	c := zkConnect(t, ens.Servers())
	world := zk.WorldACL(zk.PermAll)
	for _, n := range []struct {
		path string
		data string
		acl  []zk.ACL
	}{
		{"/safe", "", world},
		{"/safe/lock", "", world},
		{"/safe/kept", "", zk.WorldACL(zk.PermAll &^ zk.PermDelete)},
		{"/safe/kept/child", "", world},
		{"/safe/unreadable", "secret", zk.WorldACL(zk.PermDelete)},
		{"/safe/port", "5432", world},
	} {
		if _, err := c.Create(n.path, []byte(n.data), 0, n.acl); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	// A Curator mutex: a holder and a waiter watching it, each its own session.
	holderConn, waiterConn := zkConnect(t, ens.Servers()), zkConnect(t, ens.Servers())
	holder, err := holderConn.Create(fmt.Sprintf("/safe/lock/_c_%s-lock-", uuid.NewString()), nil, zk.FlagEphemeral|zk.FlagSequence, world)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waiterConn.Create(fmt.Sprintf("/safe/lock/_c_%s-lock-", uuid.NewString()), nil, zk.FlagEphemeral|zk.FlagSequence, world); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := waiterConn.ExistsW(holder); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	editor := filepath.Join(dir, "editor.sh")
	// vi's way: the file is written back with a newline at the end.
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf '5433\\n' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newTmuxScreen(t, 120, 40, fmt.Sprintf("TMPDIR=%s EDITOR=%s exec %s inspect --server %s --allow-writes",
		dir, editor, bin, ens.ConnectString()))
	s.wait(30*time.Second, "Tree", "WRITES ALLOWED")
	cd := func(p string, want ...string) {
		t.Helper()
		s.keys(":")
		s.text("cd " + p)
		s.keys("Enter")
		s.wait(10*time.Second, want...)
	}
	exists := func(p string) bool {
		t.Helper()
		ok, _, err := c.Exists(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	{
		t.Log("step: the lock is known to the inspector")
		s.keys("2")
		s.wait(60*time.Second, "/safe/lock", "1 holding")
		s.keys("1")
	}
	{
		t.Log("step: y deletes nothing; the holder is named; the count deletes")
		cd(holder, "ephemeral")
		s.keys("d")
		s.wait(20*time.Second, "this node is the live holder", "of /safe/lock", "its client still acts on it",
			"no children) (in use: see above)? type 1 or the path")
		s.keys("y", "Enter")
		s.wait(10*time.Second, `not deleted: "y" is neither 1 nor `+holder)
		if !exists(holder) {
			t.Fatalf("y deleted the holder's node")
		}
		s.keys("d")
		s.wait(20*time.Second, "type 1 or the path")
		s.keys("Escape")
		s.wait(10*time.Second, "not deleted")
		if !exists(holder) {
			t.Fatalf("esc deleted the holder's node")
		}
		s.keys("d")
		s.wait(20*time.Second, "type 1 or the path")
		s.text("1")
		s.keys("Enter")
		s.wait(10*time.Second, "deleted "+holder)
		if exists(holder) {
			t.Errorf("%s still exists after typing 1", holder)
		}
	}
	{
		t.Log("step: refused where the parent denies DELETE")
		// The Tree's title, not the path alone: the prompt shows the
		// path as it is typed, before the cd lands (d went to the node
		// before it under load).
		cd("/safe/kept/child", "/safe/kept/child · 0 children")
		s.keys("d")
		s.wait(20*time.Second, "not deleted: /safe/kept/child: this session may not delete it: the ACL of /safe/kept")
		if !exists("/safe/kept/child") {
			t.Errorf("/safe/kept/child was deleted")
		}
	}
	{
		t.Log("step: a node that denies READ is deleted as ZooKeeper allows")
		cd("/safe/unreadable", "no access")
		s.keys("d")
		s.wait(20*time.Second, "delete /safe/unreadable (version 0, no children)? type 1 or the path")
		s.text("/safe/unreadable")
		s.keys("Enter")
		s.wait(10*time.Second, "deleted /safe/unreadable")
		if exists("/safe/unreadable") {
			t.Errorf("/safe/unreadable still exists")
		}
	}
	{
		t.Log("step: the editor's trailing newline is dropped")
		cd("/safe/port", "data: text, 4 B")
		s.keys("e")
		s.wait(10*time.Second, "4 B -> 4 B (the newline the editor added at the end dropped)? y/N")
		s.keys("y")
		s.wait(10*time.Second, "wrote /safe/port")
		if data, _, err := c.Get("/safe/port"); err != nil || string(data) != "5433" {
			t.Errorf("/safe/port = %q, %v; want 5433", data, err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 1 { // editor.sh
			names := make([]string, len(left))
			for i, e := range left {
				names[i] = e.Name()
			}
			t.Errorf("files left after a successful edit: %s", strings.Join(names, ", "))
		}
	}
	s.keys("q")
}
