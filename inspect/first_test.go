package inspect

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// silentMember listens like an ensemble member that has stopped answering
// its four-letter words (a member stuck in a long GC): a four-letter word
// gets no reply until the test ends. A session handshake is refused at once,
// so that the inspector's session lands on the real member.
func silentMember(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var word [4]byte
			if _, err := io.ReadFull(c, word[:]); err != nil || strings.Trim(string(word[:]), "abcdefghijklmnopqrstuvwxyz") != "" {
				c.Close() // not a four-letter word: a session handshake
				continue
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestFirstSnapshotBeforePolls: the first snapshots of Run show the locks
// the tree holds without waiting for the members' four-letter words (on a
// production ensemble cons, dump and the capability probe take seconds). A
// member whose first poll is still in flight is pending, not down, and a
// waiter's watch is being confirmed, not flagged missing.
func TestFirstSnapshotBeforePolls(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	mustCreate(t, admin, "/app", nil, 0, open)
	mustCreate(t, admin, "/app/lock", nil, 0, open)
	// A holder and a waiter that watches nothing: judged on the servers'
	// watch lists it would be flagged; before they arrive it must not be.
	for range 2 {
		mustCreate(t, connect(t, servers), "/app/lock/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	}
	silent := silentMember(t)
	in := openInspector(t, Options{Servers: append(servers, silent), PollInterval: 100 * time.Millisecond, PollTimeout: time.Minute})
	in.SetShown(Shown{Watches: true, Sessions: true, Servers: true, Tree: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	snaps := in.Run(ctx)
	defer func() {
		cancel()
		for range snaps {
		}
	}()

	// The early snapshots come while the silent member's poll hangs; the
	// lock appears in one of them once the walk of the tree has found it.
	var first *Snapshot
	for s := range snaps {
		if len(s.Cluster.Members) == 2 && !s.Cluster.Members[1].Pending {
			t.Fatalf("the silent member is no longer pending: %+v", s.Cluster.Members[1])
		}
		if len(s.Locks) > 0 || !s.Scanning {
			first = s
			break
		}
	}
	if first == nil {
		t.Fatal("no snapshot with the lock while a member does not answer its four-letter words")
	}
	c := &first.Cluster
	if !c.Pending || len(c.Members) != 2 || !c.Members[1].Pending || c.Members[1].Up {
		t.Fatalf("first snapshot: cluster pending %v, members %+v; want the silent member pending", c.Pending, c.Members)
	}
	for _, n := range first.Notices {
		if strings.Contains(n, silent) {
			t.Errorf("first snapshot notice %q: a member not polled yet is not down", n)
		}
	}
	if !c.WatchesPending || !c.SessionsUnknown {
		t.Errorf("first snapshot: watches pending %v, sessions unknown %v; want both (being confirmed)", c.WatchesPending, c.SessionsUnknown)
	}
	l := findLock(t, first, "/app/lock")
	if len(l.Entries) != 2 || !l.WatchPending {
		t.Fatalf("first snapshot lock: %d entries, watch pending %v; want 2, pending", len(l.Entries), l.WatchPending)
	}
	for i, e := range l.Entries {
		if e.Flags != 0 || e.Session == 0 {
			t.Errorf("entry %d: flags %v, session %s; want no flag and the owner from the node's stat", i, e.Flags, SessionHex(e.Session))
		}
	}
	if len(l.Anomalies) != 0 {
		t.Errorf("first snapshot anomalies %v, want none before the servers answer", l.Anomalies)
	}
}

// TestEarlySnapshotsReadAtPollPace: the early snapshots of Run come every
// earlyWait, four a poll interval; each used to send an exists for every
// known directory, so a start cost the servers four times a steady poll
// (issue 26, finding 9). A directory read within the last poll interval is
// shown as then read: one exists per directory a poll interval, as steady.
func TestEarlySnapshotsReadAtPollPace(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	mustCreate(t, admin, "/app", nil, 0, open)
	const dirs = 10
	for i := range dirs {
		d := fmt.Sprintf("/app/lock-%d", i)
		mustCreate(t, admin, d, nil, 0, open)
		mustCreate(t, admin, d+"/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	}
	// A member that never answers keeps the snapshots early (pending).
	poll := time.Second
	in := openInspector(t, Options{Servers: append(servers, silentMember(t)), PollInterval: poll, PollTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The Tree's paths, followed with an exists each (follow.go), are
	// checked at the same pace.
	const followed = maxFollowed
	for i := range followed {
		p := fmt.Sprintf("/app/node-%d", i)
		mustCreate(t, admin, p, nil, 0, open)
		if _, err := in.Node(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	snaps := in.Run(ctx)
	defer func() {
		cancel()
		for range snaps {
		}
	}()
	var start time.Time
	requests, counted := 0, 0
	for s := range snaps {
		if s.Cost.Interval != earlyWait {
			break // early snapshots are over
		}
		if len(s.Locks) < dirs || s.Cost.Walked > 0 {
			continue // the walk is still finding them, or its cost is in this one
		}
		if start.IsZero() {
			start = s.At
		}
		requests += s.Cost.Stats + s.Cost.Lists
		counted++
		if s.At.Sub(start) >= 3*time.Second {
			break
		}
	}
	if counted < 2 {
		t.Fatalf("%d early snapshots with the %d lock directories, want several", counted, dirs)
	}
	// One read per directory a poll interval, the first interval's and
	// the last one's partly counted.
	spent := time.Since(start)
	if max := (dirs + followed) * (int(spent/poll) + 2); requests > max {
		t.Errorf("%d early snapshots in %v sent %d requests for %d directories and %d followed paths, want at most %d (one each a poll interval of %v)",
			counted, spent.Round(time.Millisecond), requests, dirs, followed, max, poll)
	}
}
