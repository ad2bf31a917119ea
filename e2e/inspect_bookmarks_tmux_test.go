package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestInspectBookmarksInTmux: b in the Tree bookmarks a node in the user's
// configuration directory; the next session lists it in Bookmarks, and
// Enter opens it (issue 26).
func TestInspectBookmarksInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	c := zkConnect(t, ens.Servers())
	for _, p := range []string{"/svc", "/svc/db", "/svc/db/port"} {
		if _, err := c.Create(p, []byte("5432"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	config := t.TempDir()
	command := fmt.Sprintf("XDG_CONFIG_HOME=%s exec %s inspect --server %s", config, bin, ens.ConnectString())

	s := newTmuxScreen(t, 120, 40, command)
	s.wait(30*time.Second, "Tree", "svc")
	s.keys(":")
	s.text("cd /svc/db/port")
	s.keys("Enter")
	s.wait(10*time.Second, "data: text, 4 B")
	s.keys("b")
	s.wait(10*time.Second, "bookmarked /svc/db/port", "/svc/db/port ★")
	s.keys("q")
	waitGone(t, s)
	data, err := os.ReadFile(filepath.Join(config, "zkherd", "bookmarks"))
	if err != nil || !strings.Contains(string(data), "\n/svc/db/port\n") {
		t.Fatalf("bookmarks file = %q, %v; want /svc/db/port on a line", data, err)
	}

	s = newTmuxScreen(t, 120, 40, command)
	s.wait(30*time.Second, "Tree", "svc")
	s.keys(":")
	s.text("bookmarks")
	s.keys("Enter")
	s.wait(10*time.Second, "Bookmarks  1 bookmark · kept in "+filepath.Join(config, "zkherd", "bookmarks"), "/svc/db/port")
	s.keys("Enter")
	s.wait(10*time.Second, "Tree  /svc/db", "/svc/db/port ★", "data: text, 4 B")
	s.keys("q")
}

// waitGone waits for the program in s to exit.
func waitGone(t *testing.T, s *tmuxScreen) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := s.run("has-session", "-t", "main"); err != nil {
			return
		}
	}
	t.Fatalf("zkherd inspect did not quit on q")
}
