package inspect

import (
	"context"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestInspectorsAreNoHerd: one kazoo waiter and two colleagues' inspectors
// looking at the held lock node are not a herd of three (issue 26,
// finding 2): inspectors set no watch on what they read, and recognise
// each other (Cluster.Inspectors) by the marker's watch.
func TestInspectorsAreNoHerd(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	kazoo(t, servers, "lock=/app/lock", "lock=/app/lock")
	names := waitChildren(t, servers, "/app/lock", 2)
	slices.SortFunc(names, bySeq)
	holder := path.Join("/app/lock", names[0])

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var colleagues []int64
	for range 2 {
		b := openInspector(t, Options{Servers: servers})
		colleagues = append(colleagues, b.SessionID())
		if _, err := b.Children(ctx, "/app/lock"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Node(ctx, holder); err != nil {
			t.Fatal(err)
		}
		b.Snapshot(ctx) // as Run does: follows what it read
	}

	in := openInspector(t, Options{Servers: servers, PollInterval: 100 * time.Millisecond})
	in.SetShown(Shown{Watches: true, Sessions: true, Servers: true, Tree: true})
	if _, err := in.Node(ctx, holder); err != nil {
		t.Fatal(err)
	}
	// Until the kazoo waiter's watch on the holder is listed.
	var snap *Snapshot
	for waited := false; !waited; {
		if ctx.Err() != nil {
			t.Fatalf("the kazoo waiter's watch never showed: %+v", snap.Cluster.Watches)
		}
		snap = in.Snapshot(ctx)
		for _, l := range snap.Locks {
			if l.Path == "/app/lock" && len(l.Entries) == 2 && slices.Contains(l.Entries[1].Watching, names[0]) {
				waited = true
			}
		}
	}
	if snap.Cluster.WatchesUnknown {
		t.Fatalf("watch lists unknown: %s", snap.Cluster.WatchesNote)
	}
	lock := findLock(t, snap, "/app/lock")
	if slices.Contains(kinds(lock), AnomalyHerd) {
		t.Errorf("a kazoo waiter and two inspectors reported as a herd: %+v", lock.Anomalies)
	}
	if got := snap.Cluster.Watchers(holder); len(got) != 1 {
		t.Errorf("sessions watching the holder %v, want the kazoo waiter alone", got)
	}
	for _, id := range append(colleagues, in.SessionID()) {
		if !slices.Contains(snap.Cluster.Inspectors, id) {
			t.Errorf("inspector session %s not recognised (Inspectors %v)", SessionHex(id), snap.Cluster.Inspectors)
		}
		if s, ok := snap.Cluster.Session(id); ok && !s.Inspector {
			t.Errorf("session %s not marked as an inspector", SessionHex(id))
		}
	}
	for _, h := range snap.Herds {
		t.Errorf("loose herd reported: %s %+v", h.Path, h.Anomalies)
	}
}

// bySeq orders sequential node names by their sequence (the last ten
// digits), as foreign recipes' names do not sort by it.
func bySeq(a, b string) int { return strings.Compare(a[max(len(a)-10, 0):], b[max(len(b)-10, 0):]) }
