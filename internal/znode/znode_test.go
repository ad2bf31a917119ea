package znode

import (
	"context"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/recipes"
)

func TestCreatePathAndParents(t *testing.T) {
	ens := enstest.Start(t, 1)
	s, err := recipes.NewSession(context.Background(), ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn := s.Conn()
	acl := zk.WorldACL(zk.PermAll)
	if err := CreateParents(conn, "/a/b/c", acl); err != nil {
		t.Fatalf("CreateParents: %v", err)
	}
	for p, want := range map[string]bool{"/a": true, "/a/b": true, "/a/b/c": false} {
		if ok, _, err := conn.Exists(p); err != nil || ok != want {
			t.Errorf("%s exists %v (%v), want %v", p, ok, err, want)
		}
	}
	// Again, and the whole path: what exists already is fine.
	if err := CreatePath(conn, "/a/b/c", acl); err != nil {
		t.Fatalf("CreatePath: %v", err)
	}
	if ok, _, _ := conn.Exists("/a/b/c"); !ok {
		t.Errorf("/a/b/c not created")
	}
	if err := CreatePath(conn, "/", acl); err != nil {
		t.Errorf("CreatePath(/): %v", err)
	}
}
