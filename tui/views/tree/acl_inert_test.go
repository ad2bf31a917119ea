package tree

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/tui/common"
)

// TestACLIdCannotConceal: the digest provider accepts any "x:y" id, so
// anyone who may create a node can put ESC[8m (conceal) in an ACL id; the
// node pane shows it as text and the entry after it, world:anyone cdrwa,
// stays visible (issue 26, finding 1).
func TestACLIdCannotConceal(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	acl := []zk.ACL{{Perms: zk.PermRead, Scheme: "digest", ID: "ops\x1b[8m:x"}, {Perms: zk.PermAll, Scheme: "world", ID: "anyone"}}
	if _, err := s.Conn().Create("/vault", []byte("password=hunter2"), 0, acl); err != nil {
		t.Fatalf("create with a hostile ACL id: %v", err)
	}
	in, err := inspect.Open(ctx, inspect.Options{Servers: ens.Servers()})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	n, err := in.Node(ctx, "/vault")
	if err != nil {
		t.Fatal(err)
	}
	m := New(ctx, common.New(100, 24), in)
	m.SetSize(100, 24)
	m.cd("/vault", "")
	m, _ = m.Update(ChildrenMsg{Path: "/vault", Children: inspect.Children{Path: "/vault"}})
	m, _ = m.Update(NodeMsg{Path: "/vault", Node: n})
	v := m.View()
	if strings.Contains(v, "\x1b[8m") {
		t.Errorf("the ACL id's ESC[8m reaches the terminal:\n%q", v)
	}
	if !strings.Contains(v, `digest:ops\x1b[8m:x r, world:anyone cdrwa`) {
		t.Errorf("the ACL line does not show the id escaped and world:anyone after it:\n%s", v)
	}
}
