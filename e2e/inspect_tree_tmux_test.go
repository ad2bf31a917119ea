package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

func zkConnect(t *testing.T, servers []string) *zk.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := benchConnect(ctx, servers, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestInspectTreeInTmux drives the Tree view of "zkherd inspect
// --allow-writes" in a real terminal against a live server as a zkCli or
// ZooNavigator user would: a leaf's data, a path that never existed, a
// 1 MB node paged to its end, create, an $EDITOR edit refused because the
// node changed meanwhile (the edited copy kept, issue 26), and the
// recursive delete of 50,000 children after typing the count (issue 15).
func TestInspectTreeInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	c := zkConnect(t, ens.Servers())
	acl := zk.WorldACL(zk.PermAll)
	big := make([]byte, 1000*1024) // under jute.maxbuffer's 1 MB with the request around it
	for i := range big {
		big[i] = byte(i*7 + i>>8)
	}
	for _, n := range []struct {
		path string
		data []byte
	}{
		{"/app", nil},
		{"/app/config.json", []byte(`{"a":1,"b":"x"}`)},
		{"/app/notes", []byte("first line\nsecond\tline")},
		{"/app/big", big},
		{"/app/many", nil},
	} {
		if _, err := c.Create(n.path, n.data, 0, acl); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	for lo := 0; lo < 50000; lo += 1000 {
		ops := make([]any, 0, 1000)
		for i := lo; i < lo+1000; i++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/app/many/c-%05d", i), Acl: acl})
		}
		if _, err := c.Multi(ops...); err != nil {
			t.Fatalf("create children: %v", err)
		}
	}

	// The editor writes its edit, says so, and waits until the test has
	// changed the node behind its back.
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	editor := filepath.Join(dir, "editor.sh")
	script := fmt.Sprintf("#!/bin/sh\nprintf 'edited' > \"$1\"\ntouch %s/editing\nwhile [ ! -f %s/changed ]; do sleep 0.1; done\n", dir, dir)
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newTmuxScreen(t, 120, 40, fmt.Sprintf("TMPDIR=%s EDITOR=%s exec %s inspect --server %s --allow-writes",
		tmp, editor, bin, ens.ConnectString()))
	s.wait(30*time.Second, "Tree", "WRITES ALLOWED")

	{ // leaf data
		t.Log("step: leaf data")
		s.keys(":")
		s.text("cd /app/config.json")
		s.keys("Enter")
		s.wait(10*time.Second, `"a": 1`, `"b": "x"`)
		s.keys(":")
		s.text("cd /app/notes")
		s.keys("Enter")
		s.wait(10*time.Second, "second␉line")
	}
	{ // no such node
		t.Log("step: no such node")
		s.keys(":")
		s.text("cd /nonexistent")
		s.keys("Enter")
		screen := s.wait(10*time.Second, "no such node: /nonexistent")
		if strings.Contains(screen, "deleted") {
			t.Errorf("a path that never existed is called deleted:\n%s", screen)
		}
	}
	{ // 1 MB node paged to its end
		t.Log("step: 1 MB node paged to its end")
		s.keys(":")
		s.text("cd /app/big")
		s.keys("Enter")
		s.wait(10*time.Second, "data: binary, 1000.0 KiB", "00000000")
		s.keys("G")
		last := fmt.Sprintf("%08x", len(big)-16)
		s.wait(10*time.Second, last)
	}
	{ // create
		t.Log("step: create")
		s.keys(":")
		s.text("cd /app")
		s.keys("Enter")
		s.wait(10*time.Second, "/app · 4 children")
		s.keys("c")
		s.wait(5*time.Second, "create [-e] [-s] NAME [DATA] in /app")
		s.text("newnode hello there")
		s.keys("Enter")
		s.wait(5*time.Second, "create /app/newnode (persistent) with 11 B of data? y/N")
		s.keys("y")
		s.wait(10*time.Second, "created /app/newnode")
		data, _, err := c.Get("/app/newnode")
		if err != nil || string(data) != "hello there" {
			t.Errorf("/app/newnode = %q, %v; want the data typed", data, err)
		}
	}
	{ // edit refused when the node changed meanwhile
		t.Log("step: edit refused when the node changed meanwhile")
		s.keys(":")
		s.text("cd /app/config.json")
		s.keys("Enter")
		s.wait(10*time.Second, `"a": 1`)
		s.keys("e")
		waitFile(t, filepath.Join(dir, "editing"))
		if _, err := c.Set("/app/config.json", []byte("changed meanwhile"), -1); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "changed"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		s.wait(10*time.Second, "set data of /app/config.json (if still version 0)", "? y/N")
		s.keys("y")
		s.wait(10*time.Second, "not written, /app/config.json changed since it was opened", "your edit that was not written is kept in")
		data, _, err := c.Get("/app/config.json")
		if err != nil || string(data) != "changed meanwhile" {
			t.Errorf("/app/config.json = %q, %v; want the other client's change kept", data, err)
		}
		// As kubectl edit does, the edited copy is kept, and its path shown.
		left, _ := os.ReadDir(tmp)
		if len(left) != 1 {
			t.Fatalf("files in TMPDIR after the refused edit: %v, want the edited copy only", left)
		}
		if kept, err := os.ReadFile(filepath.Join(tmp, left[0].Name())); err != nil || string(kept) != "edited" {
			t.Errorf("kept copy = %q, %v; want the edit", kept, err)
		}
		os.Remove(filepath.Join(tmp, left[0].Name()))
	}
	{ // recursive delete of 50,000 children
		t.Log("step: recursive delete of 50,000 children")
		s.keys(":")
		s.text("cd /app")
		s.keys("Enter")
		s.wait(10*time.Second, "/app · 5 children")
		s.keys("/")
		s.text("many")
		s.keys("Enter")
		s.wait(10*time.Second, "/app/many", "50,000 children")
		s.keys("d")
		s.wait(90*time.Second, "delete /app/many and everything under it: 50,001 nodes? type 50001 or the path")
		s.text("50001")
		s.keys("Enter")
		s.wait(120*time.Second, "deleted /app/many: 50,001 nodes")
		if ok, _, err := c.Exists("/app/many"); err != nil || ok {
			t.Errorf("/app/many exists %v (%v) after the delete", ok, err)
		}
	}
	s.keys("q")
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := s.run("has-session", "-t", "main"); err != nil {
			return
		}
	}
	t.Errorf("zkherd inspect did not quit on q")
}

func waitFile(t *testing.T, name string) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared (did the editor start?)", name)
}
