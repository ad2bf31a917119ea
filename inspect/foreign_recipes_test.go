package inspect

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestForeignRecipes runs every recipe layout of kazoo, Curator and
// ZooKeeper's own recipe jars against a real server and checks what the
// inspector says of each (issue 26, finding 3; docs/INSPECTOR-LAYOUTS.md
// lists them). Where the nodes cannot tell a lock from an election, the
// inspector says "lock or election".
func TestForeignRecipes(t *testing.T) {
	classes := compileJava(t)
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	mustCreate(t, admin, "/c", nil, 0, open)
	mustCreate(t, admin, "/c/barrier", nil, 0, open)
	for _, p := range []string{"/z", "/z/lock", "/z/queue"} {
		mustCreate(t, admin, p, nil, 0, open)
	}

	kazoo(t, servers,
		"lock=/k/lock", "lock=/k/lock",
		"read=/k/rw", "write=/k/rw",
		"semaphore=/k/sem", "semaphore=/k/sem", "semaphore=/k/sem",
		"election=/k/election", "election=/k/election",
		"queue=/k/queue",
		"lockingqueue=/k/lq")
	java(t, classes, servers,
		"mutex=/c/mutex", "mutex=/c/mutex",
		"read=/c/rw", "write=/c/rw",
		"semaphore=/c/sem", "semaphore=/c/sem",
		"latch=/c/latch", "latch=/c/latch",
		"selector=/c/selector", "selector=/c/selector",
		"queue=/c/queue",
		"barrier-wait=/c/barrier", "barrier-wait=/c/barrier", "barrier-wait=/c/barrier",
		"zk-writelock=/z/lock", "zk-writelock=/z/lock",
		"zk-queue=/z/queue")

	type lockWant struct {
		layout           string
		holders, waiters int
	}
	locks := map[string]lockWant{
		"/k/lock":         {"kazoo lock or election", 1, 1},
		"/k/rw":           {"kazoo rwlock", 1, 1},
		"/k/sem":          {"kazoo semaphore, limit 2", 2, 0},
		"/k/sem-__lock__": {"kazoo semaphore queue", 0, 1},
		"/k/election":     {"kazoo lock or election", 1, 1},
		"/c/mutex":        {"curator lock or election", 1, 1},
		"/c/rw":           {"curator rwlock", 1, 1},
		"/c/sem/locks":    {"curator semaphore queue", 0, 1},
		"/c/latch":        {"curator latch", 1, 1},
		"/c/selector":     {"curator lock or election", 1, 1},
		"/z/lock":         {"zookeeper mutex", 1, 1},
	}
	queues := map[string]int{"/k/queue": 2, "/k/lq/entries": 2, "/c/queue": 2, "/z/queue": 2}

	in := openInspector(t, Options{Servers: servers, PollInterval: 100 * time.Millisecond})
	in.SetShown(Shown{Watches: true, Sessions: true, Servers: true, Tree: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var snap *Snapshot
	var missing []string
	for {
		in.waitWalk()
		if next := in.Snapshot(ctx); ctx.Err() == nil {
			snap = next
		} else {
			break // missing is the last complete snapshot's
		}
		missing = missing[:0]
		for dir, want := range locks {
			l, ok := lockAt(snap, dir)
			if !ok || l.Layout != want.layout || l.Holders() != want.holders || l.Waiters() != want.waiters {
				missing = append(missing, fmt.Sprintf("%s: %+v (found %v), want %+v", dir, summaryOf(l), ok, want))
			}
		}
		for dir, depth := range queues {
			if q, ok := queueAt(snap, dir); !ok || q.Depth != depth {
				missing = append(missing, fmt.Sprintf("queue %s: depth %d (found %v), want %d", dir, q.Depth, ok, depth))
			}
		}
		if q, _ := queueAt(snap, "/k/lq/entries"); q.Taken != 1 || q.TakenBy == 0 || q.TakenItem == "" {
			missing = append(missing, fmt.Sprintf("kazoo LockingQueue: taken %d by %s (%q), want 1 item in progress", q.Taken, SessionHex(q.TakenBy), q.TakenItem))
		}
		if l, _ := lockAt(snap, "/c/sem/leases"); l.Layout != "curator semaphore" || len(l.Entries) == 0 || l.Holders()+l.Waiters() != 0 {
			// Curator keeps the lease limit in its clients: whether a
			// lease node holds a lease cannot be known.
			missing = append(missing, fmt.Sprintf("/c/sem/leases: %s with %d entries, want curator semaphore leases of unknown role", l.Layout, len(l.Entries)))
		}
		if h, ok := herdAt(snap, "/c/barrier"); !ok || h.Layout != "watched node (barrier or herd)" || h.Waiters() != 3 {
			missing = append(missing, fmt.Sprintf("barrier: %+v (found %v), want a watched node with 3 waiters", summaryOf(h), ok))
		}
		if h, ok := herdAt(snap, "/zookeeper/config"); ok {
			// Every Curator client watches it (EnsembleTracker): no herd.
			missing = append(missing, fmt.Sprintf("/zookeeper/config shown as a herd: %s", h.Anomalies[0].Detail))
		}
		if len(missing) == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, m := range missing {
		t.Error(m)
	}
	if len(missing) > 0 {
		for _, l := range snap.Locks {
			t.Logf("lock %s: %s", l.Path, summaryOf(l))
		}
		for _, q := range snap.Queues {
			t.Logf("queue %s: %s depth %d", q.Path, q.Layout, q.Depth)
		}
		t.Logf("notices %q cost %+v scanning %v", snap.Notices, snap.Cost, snap.Scanning)
		for _, d := range []string{"/", "/k", "/c", "/k/lock"} {
			names, _, err := admin.Children(d)
			t.Logf("%s: %v %v", d, names, err)
		}
	}
}

func summaryOf(l Lock) string {
	return fmt.Sprintf("%s, %d holding, %d waiting", l.Layout, l.Holders(), l.Waiters())
}

func lockAt(s *Snapshot, dir string) (Lock, bool) {
	for _, l := range s.Locks {
		if l.Path == dir {
			return l, true
		}
	}
	return Lock{}, false
}

func herdAt(s *Snapshot, p string) (Lock, bool) {
	for _, l := range s.Herds {
		if l.Path == p {
			return l, true
		}
	}
	return Lock{}, false
}

func queueAt(s *Snapshot, dir string) (Queue, bool) {
	for _, q := range s.Queues {
		if q.Path == dir {
			return q, true
		}
	}
	return Queue{}, false
}
