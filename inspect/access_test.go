package inspect

import (
	"context"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestUnreadableLockDirectory: a lock directory whose ACL denies the
// inspector's session is named in a notice, not silently left out of
// Locks (issue 26, finding 4); with the credentials it is shown.
func TestUnreadableLockDirectory(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	owner := connect(t, servers)
	if err := owner.AddAuth("digest", []byte("app:secret")); err != nil {
		t.Fatal(err)
	}
	private := zk.DigestACL(zk.PermAll, "app", "secret")
	mustCreate(t, owner, "/secure", nil, 0, private)
	for range 2 {
		mustCreate(t, owner, "/secure/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, private)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The command names the credentials (its flag); this package never does.
	in := openInspector(t, Options{Servers: servers, Name: func(input string) string { return "--" + input }})
	in.Snapshot(ctx)
	in.waitWalk()
	snap := in.Snapshot(ctx)
	want := "1 directory not readable: /secure (ACL; see --auth)"
	if !slices.ContainsFunc(snap.Notices, func(n string) bool { return strings.Contains(n, want) }) {
		t.Errorf("notices %q, want one saying %q", snap.Notices, want)
	}
	if !slices.Equal(snap.Unreadable, []string{"/secure"}) {
		t.Errorf("Unreadable = %v, want [/secure]", snap.Unreadable)
	}

	authed := openInspector(t, Options{Servers: servers, Auth: "app:secret"})
	authed.Snapshot(ctx)
	authed.waitWalk()
	snap = authed.Snapshot(ctx)
	if l := findLock(t, snap, "/secure"); len(l.Entries) != 2 || len(snap.Unreadable) != 0 {
		t.Errorf("with --auth: lock of %d entries, unreadable %v; want 2 entries, none", len(l.Entries), snap.Unreadable)
	}
}

// TestChrootPaths: with --server host:port/tenant every path the
// inspector returns is relative to the chroot, as the Tree's are, so a
// lock's or queue's path opens as it is shown (issue 26, finding 5).
func TestChrootPaths(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	for _, p := range []string{"/tenant", "/tenant/app", "/tenant/app/lock", "/tenant/q", "/other"} {
		mustCreate(t, admin, p, nil, 0, open)
	}
	holder := connect(t, servers)
	node := mustCreate(t, holder, "/tenant/app/lock/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	for range 2 {
		mustCreate(t, admin, "/tenant/q/qn-", []byte("item"), zk.FlagSequence, open)
	}
	mustCreate(t, holder, "/other/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)

	in := openInspector(t, Options{Servers: servers, Chroot: "/tenant"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in.warmUp(ctx) // sessions and ephemerals (dump) asked
	in.waitWalk()
	snap := in.Snapshot(ctx)
	lock := findLock(t, snap, "/app/lock")
	if _, err := in.Children(ctx, lock.Path); err != nil {
		t.Errorf("the lock's path %s does not open: %v", lock.Path, err)
	}
	if _, err := in.Node(ctx, path.Join(lock.Path, lock.Entries[0].Node)); err != nil {
		t.Errorf("the holder's node does not open: %v", err)
	}
	for _, l := range snap.Locks {
		if strings.HasPrefix(l.Path, "/tenant") || l.Path == "/other" {
			t.Errorf("lock path %s is not relative to the chroot (or outside it)", l.Path)
		}
	}
	if len(snap.Queues) != 1 || snap.Queues[0].Path != "/q" {
		t.Errorf("queues %+v, want one at /q", snap.Queues)
	}
	s, ok := snap.Cluster.Session(holder.SessionID())
	if !ok || !slices.Equal(s.Ephemerals, []string{"/app/lock/" + path.Base(node)}) {
		t.Errorf("holder's ephemerals %v (%v), want only the one inside the chroot, relative", s.Ephemerals, ok)
	}
}
