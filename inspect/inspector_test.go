package inspect

import (
	"context"
	"errors"
	"io"
	"log"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/recipes"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// connect opens a plain go-zookeeper session, closed at the end of the test.
func connect(t *testing.T, servers []string) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("no session")
		}
	}
	go func() {
		for range events {
		}
	}()
	t.Cleanup(c.Close)
	return c
}

func mustCreate(t *testing.T, c *zk.Conn, p string, data []byte, flags int32, acl []zk.ACL) string {
	t.Helper()
	name, err := c.Create(p, data, flags, acl)
	if err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	return name
}

var open = zk.WorldACL(zk.PermAll)

func openInspector(t *testing.T, opts Options) *Inspector {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	return in
}

// TestLocksDiscovered builds lock directories the way Curator and zkherd
// do, by hand, from several sessions, and checks the chains the inspector
// draws from the servers' own accounts (dump, cons, wchp).
func TestLocksDiscovered(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	for _, p := range []string{"/app", "/app/fair", "/app/herd"} {
		mustCreate(t, admin, p, nil, 0, open)
	}
	mustCreate(t, admin, "/app/fair/config", nil, 0, open) // matches no layout

	// A fair lock: 4 contenders in 4 sessions; waiter 1 and 2 watch their
	// predecessor, waiter 3 watches the holder instead.
	var nodes []string
	var conns []*zk.Conn
	for i := 0; i < 4; i++ {
		c := connect(t, servers)
		conns = append(conns, c)
		nodes = append(nodes, mustCreate(t, c, "/app/fair/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open))
	}
	for i, watch := range []int{-1, 0, 1, 0} {
		if watch < 0 {
			continue
		}
		if _, _, _, err := conns[i].ExistsW(nodes[watch]); err != nil {
			t.Fatal(err)
		}
	}
	// A herd lock: one node, three sessions watching it.
	holder := connect(t, servers)
	mustCreate(t, holder, "/app/herd/herd-lock", nil, zk.FlagEphemeral, open)
	for i := 0; i < 3; i++ {
		if _, _, _, err := connect(t, servers).ExistsW("/app/herd/herd-lock"); err != nil {
			t.Fatal(err)
		}
	}

	in := openInspector(t, Options{Servers: servers, PollInterval: 100 * time.Millisecond})
	in.SetShown(Shown{Watches: true, Sessions: true, Servers: true, Tree: true})
	ctx := context.Background()
	in.warmUp(ctx) // learns the watch count, sessions and ephemerals: wchp is asked from the next one on
	// The first poll with the servers' watch lists lists the nodes: their
	// watches are expected. A missing or wrong watch is reported when the
	// two polls after it agree.
	first := in.Snapshot(ctx)
	if e := findLock(t, first, "/app/fair").Entries[3]; e.Watch != WatchExpected || e.Flags != 0 {
		t.Errorf("waiter 3 at the first poll: watch state %d, flags %v; want expected, no flag", e.Watch, e.Flags)
	}
	if e := findLock(t, in.Snapshot(ctx), "/app/fair").Entries[3]; e.Flags != 0 {
		t.Errorf("waiter 3 flagged %v after one poll since its node appeared, want no flag yet", e.Flags)
	}
	snap := in.Snapshot(ctx)
	for _, i := range []int{1, 2} {
		if e := findLock(t, snap, "/app/fair").Entries[i]; e.Watch != WatchConfirmed || e.Confirmed < 0 || e.Confirmed > time.Minute {
			t.Errorf("waiter %d: watch state %d confirmed %v ago, want confirmed", i, e.Watch, e.Confirmed)
		}
	}

	fair := findLock(t, snap, "/app/fair")
	if fair.Layout != "curator lock or election" || len(fair.Entries) != 4 {
		t.Fatalf("fair lock = %s with %d entries, want curator lock or election with 4", fair.Layout, len(fair.Entries))
	}
	for i, e := range fair.Entries {
		if e.Node != path.Base(nodes[i]) {
			t.Errorf("entry %d is %s, want %s (sequence order)", i, e.Node, path.Base(nodes[i]))
		}
		if e.Session != conns[i].SessionID() {
			t.Errorf("entry %d session %s, want %s", i, SessionHex(e.Session), SessionHex(conns[i].SessionID()))
		}
		if !strings.HasPrefix(e.Endpoint, "127.0.0.1:") {
			t.Errorf("entry %d endpoint %q, want the client's address from cons", i, e.Endpoint)
		}
		if e.Age < 0 || e.Age > time.Minute {
			t.Errorf("entry %d age %v", i, e.Age)
		}
	}
	if r := fair.Entries[0].Role; r != RoleHolder {
		t.Errorf("entry 0 role %v, want holder", r)
	}
	if w := fair.Entries[2].Watching; !slices.Equal(w, []string{path.Base(nodes[1])}) {
		t.Errorf("waiter 2 watches %v, want its predecessor", w)
	}
	if !fair.Entries[3].Flags.Has(AnomalyWrongWatch) {
		t.Errorf("waiter 3 flags %v, want wrong watch", fair.Entries[3].Flags)
	}
	if got := kinds(fair); !slices.Contains(got, AnomalyWrongWatch) || !slices.Contains(got, AnomalyUnrecognised) {
		t.Errorf("fair lock anomalies %v, want wrong watch and unrecognised", got)
	}
	if !slices.Equal(fair.Unrecognised, []string{"config"}) {
		t.Errorf("unrecognised %v, want [config]", fair.Unrecognised)
	}

	herd := findLock(t, snap, "/app/herd")
	if herd.Holders() != 1 || herd.Waiters() != 3 || !slices.Contains(kinds(herd), AnomalyHerd) {
		t.Errorf("herd lock: %d holders, %d waiters, anomalies %v; want 1, 3, herd", herd.Holders(), herd.Waiters(), kinds(herd))
	}
	if herd.Entries[0].Session != holder.SessionID() {
		t.Errorf("herd holder %s, want %s", SessionHex(herd.Entries[0].Session), SessionHex(holder.SessionID()))
	}

	// Sessions and the capability probe.
	if s, ok := snap.Cluster.Session(conns[1].SessionID()); !ok || len(s.Watches) != 1 || len(s.Ephemerals) != 1 {
		t.Errorf("session of waiter 1 = %+v, %v; want one watch, one ephemeral", s, ok)
	}
	for _, c := range snap.Cluster.Capabilities {
		if !c.Available {
			t.Errorf("capability %s unavailable on a server with every 4lw whitelisted", c.Command)
		}
	}
	if snap.Cluster.Self != in.SessionID() || in.SessionID() == 0 {
		t.Errorf("Self = %s, inspector session %s", SessionHex(snap.Cluster.Self), SessionHex(in.SessionID()))
	}
}

func findLock(t *testing.T, s *Snapshot, dir string) Lock {
	t.Helper()
	for _, l := range s.Locks {
		if l.Path == dir {
			return l
		}
	}
	var found []string
	for _, l := range s.Locks {
		found = append(found, l.Path)
	}
	t.Fatalf("no lock at %s; found %v (notices %v)", dir, found, s.Notices)
	return Lock{}
}

// TestTree reads nodes the way the Tree view does: an ACL-denied node, a
// 1 MB node, binary data, and watches that report changes.
func TestTree(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	if err := admin.AddAuth("digest", []byte("user:pass")); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, admin, "/app", nil, 0, open)
	mustCreate(t, admin, "/app/secret", []byte("top secret"), 0, zk.DigestACL(zk.PermAll, "user", "pass"))
	mustCreate(t, admin, "/app/closed", nil, 0, zk.DigestACL(zk.PermAll, "user", "pass"))
	big := []byte(strings.Repeat("0123456789", 100_000)) // 1 MB, under jute.maxbuffer
	mustCreate(t, admin, "/app/big", big, 0, open)
	bin := []byte{0, 1, 2, 0xfe, 0xff}
	mustCreate(t, admin, "/app/bin", bin, 0, open)
	mustCreate(t, admin, "/app/text", []byte("v1"), 0, open)

	in := openInspector(t, Options{Servers: servers})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ch, err := in.Children(ctx, "/app")
	if err != nil || !slices.Equal(ch.Names, []string{"big", "bin", "closed", "secret", "text"}) {
		t.Fatalf("children of /app = %v, %v", ch.Names, err)
	}
	n, err := in.Node(ctx, "/app/secret")
	if err != nil || !n.NoAccess || n.Data != nil || n.Stat.DataLength != 10 {
		t.Errorf("denied node = %+v, %v; want NoAccess with its stat", n, err)
	}
	if _, err := in.Children(ctx, "/app/closed"); !errors.Is(err, ErrNoAccess) {
		t.Errorf("listing a denied directory: %v, want ErrNoAccess", err)
	}
	if n, err := in.Node(ctx, "/app/big"); err != nil || len(n.Data) != len(big) {
		t.Errorf("1 MB node: %d bytes, %v", len(n.Data), err)
	} else if d := Decode(n.Data, 0, 0); !d.Truncated() || d.Kind != DataText {
		t.Errorf("1 MB node decodes as %s, truncated %v", d.Kind, d.Truncated())
	}
	if n, err := in.Node(ctx, "/app/bin"); err != nil || Decode(n.Data, 0, 0).Kind != DataBinary {
		t.Errorf("binary node: %v %v", n.Data, err)
	}

	// Changes (found by the snapshots' checks, no watch set): a data
	// change of a node read, a child added to a listed directory.
	if _, err := in.Node(ctx, "/app/text"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Set("/app/text", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, admin, "/app/new", nil, 0, open)
	want := map[string]ChangeKind{"/app/text": ChangedData, "/app": ChangedChildren}
	got := map[string]ChangeKind{}
	for len(got) < len(want) {
		in.Snapshot(ctx)
		select {
		case <-in.Changes():
			for _, c := range in.TakeChanges() {
				got[c.Path] |= c.Kind
			}
		case <-ctx.Done():
			t.Fatalf("changes so far %v, want %v", got, want)
		}
	}
	for p, k := range want {
		if got[p]&k == 0 {
			t.Errorf("change of %s = %v, want %v", p, got[p], k)
		}
	}

	// Read-only by default.
	if err := in.Delete(ctx, "/app/text", -1); !errors.Is(err, ErrReadOnly) {
		t.Errorf("delete on a read-only inspector: %v, want ErrReadOnly", err)
	}
	if err := in.SetData(ctx, "/app/text", []byte("x"), -1); !errors.Is(err, ErrReadOnly) {
		t.Errorf("set data on a read-only inspector: %v, want ErrReadOnly", err)
	}

	// With credentials and writes allowed.
	rw := openInspector(t, Options{Servers: servers, Auth: "user:pass", AllowWrites: true})
	if n, err := rw.Node(ctx, "/app/secret"); err != nil || n.NoAccess || string(n.Data) != "top secret" {
		t.Errorf("with auth: %+v %v", n, err)
	}
	if err := rw.SetData(ctx, "/app/text", []byte("v3"), 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("set data with a stale version: %v, want ErrBadVersion", err)
	}
	if err := rw.Delete(ctx, "/app/new", 0); err != nil {
		t.Errorf("delete: %v", err)
	}
	if ok, _, _ := admin.Exists("/app/new"); ok {
		t.Error("/app/new still exists after delete")
	}
}

// TestChroot: paths are relative to the chroot; lock paths stay the
// servers'.
func TestChroot(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	mustCreate(t, admin, "/tenant", nil, 0, open)
	mustCreate(t, admin, "/tenant/a", []byte("x"), 0, open)
	in := openInspector(t, Options{Servers: ens.Servers(), Chroot: "/tenant"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := in.Children(ctx, "/")
	if err != nil || !slices.Equal(ch.Names, []string{"a"}) {
		t.Errorf("children of / under chroot /tenant = %v, %v; want [a]", ch.Names, err)
	}
	if n, err := in.Node(ctx, "/a"); err != nil || string(n.Data) != "x" {
		t.Errorf("node /a under chroot = %q, %v", n.Data, err)
	}
}

// TestQueueSampled: a directory of persistent sequential items is a queue;
// depth and rates come from successive snapshots.
func TestQueueSampled(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	mustCreate(t, admin, "/q", nil, 0, open)
	for i := 0; i < 5; i++ {
		mustCreate(t, admin, "/q/qn-", []byte("item"), zk.FlagSequence, open)
	}
	in := openInspector(t, Options{Servers: ens.Servers()})
	ctx := context.Background()
	in.Snapshot(ctx) // starts the walk that finds the queue (no ephemeral points at it)
	in.waitWalk()
	first := in.Snapshot(ctx)
	if len(first.Queues) != 1 || first.Queues[0].Depth != 5 || first.Queues[0].Head != "qn-0000000000" {
		t.Fatalf("queues = %+v, want /q with 5 items", first.Queues)
	}
	for i := 0; i < 3; i++ {
		mustCreate(t, admin, "/q/qn-", []byte("item"), zk.FlagSequence, open)
	}
	if err := admin.Delete("/q/qn-0000000000", -1); err != nil {
		t.Fatal(err)
	}
	// Seen at the directory's next read: at once while it changes, within
	// the cap once still (still.go).
	var second *Snapshot
	for deadline := time.Now().Add(in.stillCap() + 30*time.Second); ; {
		second = in.Snapshot(ctx)
		if len(second.Queues) != 1 || second.Queues[0].Depth != 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	q := second.Queues[0]
	// The snapshot that started the walk may have sampled the queue too.
	if q.Depth != 7 || len(q.Depths) < 2 || !slices.Equal(q.Depths[len(q.Depths)-2:], []int{5, 7}) || q.EnqueueRate <= 0 || q.DequeueRate <= 0 {
		t.Errorf("queue after 3 enqueues and 1 dequeue = %+v", q)
	}
	if len(second.Locks) != 0 {
		t.Errorf("a queue reported as a lock: %+v", second.Locks)
	}
}

// TestQueueInRecreatedDirectory: zkherd load deletes /zkherd/runs when its
// run ends and the next run creates it again, with one child: a new node
// whose cversion (1) equals the old one's when it was listed. The walk's
// cached listing of the old node must not stand for the new one (in CI the
// queue run's directory was never walked: the listing still named the
// first run's).
func TestQueueInRecreatedDirectory(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	mustCreate(t, admin, "/runs", nil, 0, open)
	mustCreate(t, admin, "/runs/first", nil, 0, open)
	in := openInspector(t, Options{Servers: ens.Servers(), RescanEvery: 1})
	ctx := context.Background()
	in.Snapshot(ctx)
	in.waitWalk()
	for _, p := range []string{"/runs/first", "/runs"} {
		if err := admin.Delete(p, -1); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, admin, "/runs", nil, 0, open)
	mustCreate(t, admin, "/runs/second", nil, 0, open)
	mustCreate(t, admin, "/runs/second/queue", nil, 0, open)
	mustCreate(t, admin, "/runs/second/queue/qn-", []byte("item"), zk.FlagSequence, open)
	// Two walks after the change (walkAverageShare spaces them out), then the
	// snapshot that reads what they found.
	for walks, deadline := 0, time.Now().Add(10*time.Second); walks < 2 && time.Now().Before(deadline); {
		in.Snapshot(ctx)
		in.waitWalk()
		if in.Snapshot(ctx).Cost.Walked > 0 {
			walks++
		}
		time.Sleep(100 * time.Millisecond)
	}
	snap := in.Snapshot(ctx)
	if len(snap.Queues) != 1 || snap.Queues[0].Path != "/runs/second/queue" {
		t.Fatalf("queues = %+v, want /runs/second/queue", snap.Queues)
	}
}

// TestMemberKilled: a member killed mid-view shows as down while the
// others keep answering.
func TestMemberKilled(t *testing.T) {
	ens := enstest.Start(t, 3)
	in := openInspector(t, Options{Servers: ens.Servers(), PollInterval: 200 * time.Millisecond, PollTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	snaps := in.Run(ctx)
	waitFor := func(what string, ok func(*Snapshot) bool) *Snapshot {
		t.Helper()
		for s := range snaps {
			if ok(s) {
				return s
			}
		}
		t.Fatalf("no snapshot with %s before the deadline", what)
		return nil
	}
	waitFor("3 members up", func(s *Snapshot) bool { return s.Cluster.UpMembers() == 3 })
	// Kill a follower: the two others keep serving without an election.
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := ens.Members()[0]
	if victim.ID == leader {
		victim = ens.Members()[1]
	}
	if err := ens.Kill(victim.ID); err != nil {
		t.Fatal(err)
	}
	i := victim.ID - 1
	s := waitFor("the killed member down, the others up", func(s *Snapshot) bool {
		return !s.Cluster.Members[i].Up && s.Cluster.UpMembers() == 2
	})
	if s.Cluster.Members[i].Err == "" {
		t.Error("down member without a reason")
	}
	if !slices.ContainsFunc(s.Notices, func(n string) bool { return strings.Contains(n, victim.ClientAddr) }) {
		t.Errorf("notices %v do not name the dead member", s.Notices)
	}
	cancel()
	for range snaps {
	}
}

// TestQueueHeadConsumedSinceListing: a queue consumed fast has its first
// items taken between the listing and the look at its head; it is still a
// queue (TestInspectUnderChurnInTmux/queue saw "no queue found" for the
// whole run under load), with its head unknown. A directory of ephemeral
// sequential nodes is still not one.
func TestQueueHeadConsumedSinceListing(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	mustCreate(t, admin, "/q", nil, 0, open)
	mustCreate(t, admin, "/e", nil, 0, open)
	for i := 0; i < 20; i++ {
		mustCreate(t, admin, "/q/qn-", []byte("item"), zk.FlagSequence, open)
		mustCreate(t, admin, "/e/qn-", nil, zk.FlagSequence|zk.FlagEphemeral, open)
	}
	listing := func(dir string) []recipes.Node {
		names, _, err := admin.Children(dir)
		if err != nil {
			t.Fatal(err)
		}
		nodes, _ := recipes.ParseChildren(names)
		return nodes
	}
	qNodes, eNodes := listing("/q"), listing("/e")
	for _, n := range qNodes[:12] { // consumed since the listing
		if err := admin.Delete("/q/"+n.Name, -1); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range eNodes[:12] {
		if err := admin.Delete("/e/"+n.Name, -1); err != nil {
			t.Fatal(err)
		}
	}
	in := openInspector(t, Options{Servers: ens.Servers()})
	c, err := in.conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st := &scanState{}
	st.init()
	q, ok := in.readQueue(c, st, "/q", qNodes, nil, time.Now())
	if !ok || q.Path != "/q" || q.Depth != 20 || q.Head != "" || q.HeadAge != -1 {
		t.Errorf("queue whose head was consumed: %+v, ok %v; want /q, depth 20 as listed, head unknown", q, ok)
	}
	if q, ok := in.readQueue(c, st, "/e", eNodes, nil, time.Now()); ok {
		t.Errorf("ephemeral sequential nodes taken as a queue: %+v", q)
	}
}

// TestWalkFindsInTheSnapshotThatStartsIt: a lock directory that only the
// walk can find (no session owns or watches its nodes) shows in the
// snapshot whose walk found it. While the servers are busy, snapshots are
// 16 s apart (maxBackoff); a walk's finds used to wait for the snapshot
// after the one that started it, and a new run's lock waited two or three
// such intervals (CI's TestInspectUnderChurnInTmux/herd-children after the
// fair-lock run: 0 lock directories for 2 minutes).
func TestWalkFindsInTheSnapshotThatStartsIt(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	in := openInspector(t, Options{Servers: ens.Servers(), RescanEvery: 1})
	ctx := context.Background()
	in.Snapshot(ctx)
	in.waitWalk()
	in.Snapshot(ctx)
	mustCreate(t, admin, "/run", nil, 0, open)
	mustCreate(t, admin, "/run/lock", nil, 0, open)
	mustCreate(t, admin, "/run/lock/lock-", nil, zk.FlagSequence, open)
	time.Sleep(time.Second) // the last walk's cost, spread (walkAverageShare)
	snap := in.Snapshot(ctx)
	if len(snap.Locks) != 1 || snap.Locks[0].Path != "/run/lock" {
		t.Fatalf("locks = %+v, want /run/lock in the snapshot that walked it", snap.Locks)
	}
}
