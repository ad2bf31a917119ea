package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestInspectSearchInTmux searches a real tree as a zk-shell user would
// (issue 26): :find by path from the Tree, :grep by data under a path,
// Enter on a hit opens it in the Tree, and [ comes back to the hits.
// searchWait bounds each search of the test's tree (about 210 nodes): a
// search reads at the tree walk's pace (--walk-rate, shared with the walk,
// inspect/pace.go), here 200 units a second as a user with a small tree
// may ask (the default, 20, took 10-20 s a search), more on a loaded
// machine. The pace itself is inspect's tests' (TestTreePacerShared).
const searchWait = 90 * time.Second

func TestInspectSearchInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	c := zkConnect(t, ens.Servers())
	world := zk.WorldACL(zk.PermAll)
	for _, n := range []struct{ path, data string }{
		{"/svc", ""},
		{"/svc/db", ""},
		{"/svc/db/port", "5432"},
		{"/svc/db/host", "db1.example.com"},
		{"/svc/web", ""},
		{"/svc/web/url", "postgres://db1.example.com:5432/app"},
		{"/elsewhere", "5432"},
	} {
		if _, err := c.Create(n.path, []byte(n.data), 0, world); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	// A node this session may not read: the search counts it, and the
	// command names the setting that would help as its flag.
	if _, err := c.Create("/svc/private", nil, 0, zk.DigestACL(zk.PermAll, "app", "secret")); err != nil {
		t.Fatalf("create /svc/private: %v", err)
	}
	for i := range 200 {
		if _, err := c.Create(fmt.Sprintf("/svc/web/item-%03d", i), []byte("x"), 0, world); err != nil {
			t.Fatal(err)
		}
	}
	s := newTmuxScreen(t, 120, 40, fmt.Sprintf("exec %s inspect --walk-rate 200 --server %s", bin, ens.ConnectString()))
	s.wait(30*time.Second, "Tree", "svc")
	t.Log("step: :find from the Tree")
	s.keys(":")
	s.text("find db/")
	s.keys("Enter")
	// Libraries never name flags (issue 20): zkherd inspect names them.
	s.wait(searchWait, "Search  find db/ · done · 2 hits", "/svc/db/host", "/svc/db/port", "1 not readable (ACL; see --auth)")
	t.Log("step: :grep under a path")
	s.keys(":")
	s.text("grep /svc 5432")
	s.keys("Enter")
	screen := s.wait(searchWait, "grep /svc 5432 · done · 2 hits", "/svc/db/port", "/svc/web/url", "postgres://db1.example.com:5432/app")
	if allIn(screen, []string{"/elsewhere"}) {
		t.Errorf("the grep under /svc found /elsewhere:\n%s", screen)
	}
	t.Log("step: Enter opens a hit in the Tree; [ comes back")
	s.keys("j", "Enter")
	s.wait(10*time.Second, "Tree  /svc/web", "postgres://db1.example.com:5432/app")
	s.keys("d")
	s.wait(10*time.Second, "read-only: start zkherd inspect with --allow-writes to change nodes")
	s.keys("[")
	s.wait(10*time.Second, "grep /svc 5432 · done")
	t.Log("step: [ from a newer search comes back to the older one, run again")
	s.keys(":")
	s.text("find item-1")
	s.keys("Enter")
	s.wait(searchWait, "find item-1 · done · 100 hits")
	s.keys("[")
	s.wait(searchWait, "grep /svc 5432 · done · 2 hits", "/svc/web/url")
	s.keys("q")
}
