package inspect

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestTreeWrites: create (mode and data), set ACL, counting and deleting a
// subtree of 50,000 children and a few grandchildren.
func TestTreeWrites(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	ro := openInspector(t, Options{Servers: ens.Servers()})
	ctx := context.Background()
	if _, err := ro.Create(ctx, "/x", nil, CreateMode{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only create: %v, want ErrReadOnly", err)
	}
	in := openInspector(t, Options{Servers: ens.Servers(), AllowWrites: true})
	made, err := in.Create(ctx, "/app", []byte("root"), CreateMode{})
	if err != nil || made != "/app" {
		t.Fatalf("create /app = %q, %v", made, err)
	}
	made, err = in.Create(ctx, "/app/job-", []byte("d"), CreateMode{Ephemeral: true, Sequential: true})
	if err != nil || made != "/app/job-0000000000" {
		t.Fatalf("create ephemeral sequential = %q, %v", made, err)
	}
	if _, stat, err := admin.Get(made); err != nil || stat.EphemeralOwner != in.SessionID() {
		t.Errorf("%s: owner %v, %v; want the inspector's session", made, stat, err)
	}
	acl, err := ParseACL("world:anyone:r,ip:127.0.0.1:cdrwa")
	if err != nil {
		t.Fatal(err)
	}
	if err := in.SetACL(ctx, "/app", acl, 0); err != nil {
		t.Fatalf("set ACL: %v", err)
	}
	if got, _, err := admin.GetACL("/app"); err != nil || len(got) != 2 || got[0].Perms != zk.PermRead {
		t.Errorf("ACL of /app = %+v, %v", got, err)
	}
	if err := in.SetACL(ctx, "/app", acl, 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("set ACL with a stale aversion: %v, want a version error", err)
	}
	if _, err := ParseACL("world:anyone:rx"); err == nil {
		t.Error("ParseACL accepted the permission x")
	}

	mustCreate(t, admin, "/big", nil, 0, open)
	for lo := 0; lo < 50000; lo += 1000 {
		ops := make([]any, 0, 1000)
		for i := lo; i < lo+1000; i++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/big/c-%05d", i), Acl: open})
		}
		if _, err := admin.Multi(ops...); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		mustCreate(t, admin, fmt.Sprintf("/big/c-00007/g-%d", i), nil, 0, open)
	}
	start := time.Now()
	plan, err := in.PlanDelete(ctx, "/big")
	t.Logf("counted %d nodes in %s", plan.Count, time.Since(start))
	if err != nil || plan.Count != 50004 || plan.Refused != "" {
		t.Fatalf("plan = %+v, %v; want 50,004 nodes, allowed", plan, err)
	}
	start = time.Now()
	n, err := in.DeleteTree(ctx, "/big")
	t.Logf("deleted %d nodes in %s", n, time.Since(start))
	if err != nil || n != 50004 {
		t.Fatalf("delete = %d, %v; want 50,004", n, err)
	}
	if ok, _, _ := admin.Exists("/big"); ok {
		t.Error("/big still exists")
	}
}
