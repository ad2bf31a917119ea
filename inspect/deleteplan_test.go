package inspect

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestPlanDelete: a delete is checked against the ACL ZooKeeper applies
// (DELETE on the parent of every node removed), not against the node's
// own: a node whose ACL denies READ is deletable when its parent allows
// it, and a node whose parent grants delete to nobody this session is is
// refused in words before anything is removed (issue 26, finding 6).
func TestPlanDelete(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	if err := admin.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	world := zk.WorldACL(zk.PermAll)
	alice := zk.DigestACL(zk.PermAll, "alice", "secret")
	noDelete := zk.WorldACL(zk.PermAll &^ zk.PermDelete)
	for _, n := range []struct {
		path string
		acl  []zk.ACL
	}{
		{"/open", world},
		{"/open/unreadable", zk.WorldACL(zk.PermDelete)}, // no READ
		{"/open/tree", world},
		{"/open/tree/a", world},
		{"/open/tree/a/b", world},
		{"/kept", noDelete},
		{"/kept/child", world},
		{"/open/tree2", world},
		{"/open/tree2/sealed", noDelete},
		{"/open/tree2/sealed/leaf", world},
		{"/alice", alice},
		{"/alice/x", world},
		{"/open/hidden", zk.WorldACL(zk.PermDelete | zk.PermCreate)}, // no READ
		{"/open/hidden/kid", world},
	} {
		if _, err := admin.Create(n.path, nil, 0, n.acl); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	in := openInspector(t, Options{Servers: ens.Servers(), AllowWrites: true})
	ctx := context.Background()
	tests := []struct {
		path    string
		count   int
		refused string // "" when allowed
	}{
		{"/open/unreadable", 1, ""},
		{"/open/tree", 3, ""},
		{"/kept/child", 0, "this session may not delete it: the ACL of /kept (world:anyone:crwa)"},
		{"/open/tree2", 0, "may not delete the children of /open/tree2/sealed"},
		{"/open/hidden", 0, "it has 1 child and this session may not list what is under it"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			plan, err := in.PlanDelete(ctx, tc.path)
			if err != nil {
				t.Fatalf("PlanDelete: %v", err)
			}
			if tc.refused == "" {
				if plan.Refused != "" || plan.Count != tc.count {
					t.Fatalf("plan = %+v, want %d nodes, allowed", plan, tc.count)
				}
				var err error
				if plan.Count == 1 {
					err = in.Delete(ctx, tc.path, plan.Version)
				} else {
					_, err = in.DeleteTree(ctx, tc.path)
				}
				if err != nil {
					t.Errorf("the delete the plan allowed failed: %v", err)
				}
				return
			}
			if !strings.Contains(plan.Refused, tc.refused) {
				t.Errorf("refused = %q, want it to say %q", plan.Refused, tc.refused)
			}
		})
	}
	// Without credentials the ACL of /alice cannot even be read (getACL
	// needs READ or ADMIN): the plan says it does not know, and the
	// servers refuse.
	if plan, err := in.PlanDelete(ctx, "/alice/x"); err != nil || plan.Refused != "" || !strings.Contains(plan.Unsure, "the ACL of /alice could not be read") {
		t.Errorf("plan for /alice/x without credentials = %+v, %v; want unsure", plan, err)
	}
	// With alice's credentials her node's children may go.
	as := openInspector(t, Options{Servers: ens.Servers(), AllowWrites: true, Auth: "alice:secret"})
	if plan, err := as.PlanDelete(ctx, "/alice/x"); err != nil || plan.Refused != "" || plan.Unsure != "" {
		t.Errorf("alice's plan for /alice/x = %+v, %v; want allowed", plan, err)
	}
}

func TestMayDelete(t *testing.T) {
	anyone := []identity{{"world", "anyone"}}
	tests := []struct {
		name       string
		acl        []zk.ACL
		ids        []identity
		may, known bool
	}{
		{"world grants", zk.WorldACL(zk.PermAll), anyone, true, true},
		{"world without delete", zk.WorldACL(zk.PermRead | zk.PermCreate), anyone, false, true},
		{"other digest", zk.DigestACL(zk.PermAll, "bob", "pw"), anyone, false, true},
		{"ip entry", []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "127.0.0.1"}}, anyone, false, false},
		{"superuser", zk.WorldACL(zk.PermRead), []identity{{"world", "anyone"}, {"super", ""}}, false, false},
	}
	for _, tc := range tests {
		if may, known := mayDelete(tc.acl, tc.ids); may != tc.may || known != tc.known {
			t.Errorf("%s: mayDelete = %v, %v; want %v, %v", tc.name, may, known, tc.may, tc.known)
		}
	}
}

// TestRolesAt: what a delete would break, in words, from a snapshot's
// locks: a holder named as such (or as holder or leader where the layout
// cannot tell), a lease, and the waiters that lose their place.
func TestRolesAt(t *testing.T) {
	snap := &Snapshot{Locks: []Lock{
		{Path: "/app/lock", Layout: "zookeeper mutex", Entries: []LockEntry{
			{Node: "x-lock-0000000001", Role: RoleHolder, Kind: "lock", Session: 0x10, Endpoint: "10.0.0.1:5000"},
			{Node: "x-lock-0000000002", Role: RoleWaiter, Kind: "lock", Session: 0x11},
			{Node: "x-lock-0000000003", Role: RoleWaiter, Kind: "lock", Session: 0x12},
		}},
		{Path: "/app/ambiguous", Layout: "kazoo lock or election", Entries: []LockEntry{
			{Node: "n-0000000001", Role: RoleHolder, Kind: "lock"},
		}},
		{Path: "/app/sem/leases", Layout: "curator semaphore", Entries: []LockEntry{
			{Node: "lease-1", Role: RoleHolder, Kind: "lease", Session: 0x20},
		}},
	}}
	tests := []struct {
		path string
		want []string
	}{
		{"/app/lock/x-lock-0000000001", []string{"this node is the live holder of /app/lock (session 0x10 at 10.0.0.1:5000): its client still acts on it while another takes its place"}},
		{"/app/lock/x-lock-0000000002", []string{"1 waiter loses its place in line"}},
		{"/app/ambiguous", []string{"/app/ambiguous/n-0000000001 is the live holder (or leader) of /app/ambiguous (session not known yet): its client still acts on it while another takes its place"}},
		{"/app/sem", []string{"/app/sem/leases/lease-1 is a semaphore lease of /app/sem/leases (session 0x20): its client still acts on it while another takes its place"}},
		{"/app/other", nil},
	}
	for _, tc := range tests {
		if got := snap.RolesAt(tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("RolesAt(%s) =\n%q\nwant\n%q", tc.path, got, tc.want)
		}
	}
}
