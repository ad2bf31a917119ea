package recipes

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// listingCounter counts a lock's directory listings.
func listingCounter() (*LockTrace, *atomic.Int32) {
	var n atomic.Int32
	return &LockTrace{Request: func(op Op, _ time.Duration, _ error) {
		if op == OpGetChildren {
			n.Add(1)
		}
	}}, &n
}

// TestLockHandOffByReleaseMark: a holder's release hands the lock to its
// successor without a listing, and no other session can fake a release:
// the server refuses a foreign write to a zkherd lock node.
func TestLockHandOffByReleaseMark(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 30*time.Second)
	holder := NewLock(newTestSession(t, servers), path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatalf("holder Lock: %v", err)
	}
	trace, listings := listingCounter()
	waiter := NewLock(newTestSession(t, servers), path, WithTrace(trace))
	granted := make(chan error, 1)
	go func() { granted <- waiter.Lock(ctx) }()
	foreign := newTestSession(t, servers)
	waitFor(t, 10*time.Second, "the waiter's node", func() bool { return len(children(t, foreign, path)) == 2 })
	waitFor(t, 10*time.Second, "the waiter's first listing", func() bool { return listings.Load() == 1 })

	if !ownerWritesOnly(baseName(holder.Node())) {
		t.Errorf("holder's node %s is not named as owner-written", holder.Node())
	}
	if _, err := foreign.Conn().Set(holder.Node(), releasedMark, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("foreign write to the holder's node = %v, want %v", err, zk.ErrNoAuth)
	}
	if _, err := foreign.Conn().SetACL(holder.Node(), openACL, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("foreign ACL change on the holder's node = %v, want %v", err, zk.ErrNoAuth)
	}
	if data, _, err := foreign.Conn().Get(holder.Node()); err != nil || len(data) != 0 {
		t.Errorf("foreign read of the holder's node = %q, %v; want it readable and empty", data, err)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-granted:
		t.Fatalf("waiter returned (err %v) while the lock was held", err)
	default:
	}

	before := listings.Load()
	oldToken := holder.FencingToken()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("holder Unlock: %v", err)
	}
	if err := <-granted; err != nil {
		t.Fatalf("waiter Lock: %v", err)
	}
	if after := listings.Load(); after != before {
		t.Errorf("the hand-off listed the directory %d time(s), want none", after-before)
	}
	if tok := waiter.FencingToken(); tok <= oldToken {
		t.Errorf("token %d after %d, want it higher", tok, oldToken)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Errorf("waiter Unlock: %v", err)
	}
	if left := children(t, foreign, path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// TestLockForeignPredecessorWritten: a write to a predecessor node that is
// not a zkherd Lock's (here a Curator-named one, as Curator's Revoker
// writes to a holder's node) wakes the waiter, which lists and goes on
// waiting; only the node's deletion lets it through.
func TestLockForeignPredecessorWritten(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 30*time.Second)
	foreign := newTestSession(t, servers)
	if err := ensurePath(ctx, foreign, path); err != nil {
		t.Fatal(err)
	}
	curator, err := foreign.Conn().Create(path+"/"+ProtectedPrefix+uuid.NewString()+"-"+PrefixLock, nil, zk.FlagEphemeralSequential, openACL)
	if err != nil {
		t.Fatal(err)
	}
	if ownerWritesOnly(baseName(curator)) {
		t.Fatalf("Curator's node %s is taken for an owner-written one", curator)
	}
	trace, listings := listingCounter()
	// The write must come after the waiter's watch is set (Waiting), not
	// only after its listing: written in between, the watch's own read
	// sees the data and no event follows (CI under -race did that).
	var waits atomic.Int32
	trace.Waiting = func(time.Time) { waits.Add(1) }
	waiter := NewLock(newTestSession(t, servers), path, WithTrace(trace))
	granted := make(chan error, 1)
	go func() { granted <- waiter.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the waiter's node", func() bool { return len(children(t, foreign, path)) == 2 })
	waitFor(t, 10*time.Second, "the waiter's first listing and watch", func() bool { return listings.Load() == 1 && waits.Load() == 1 })

	if _, err := foreign.Conn().Set(curator, []byte("__REVOKE__"), -1); err != nil {
		t.Fatalf("revoke-style write: %v", err)
	}
	waitFor(t, 10*time.Second, "the listing after the wake-up", func() bool { return listings.Load() == 2 })
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-granted:
		t.Fatalf("waiter returned (err %v) while the Curator node held the lock", err)
	default:
	}
	if err := foreign.Conn().Delete(curator, -1); err != nil {
		t.Fatal(err)
	}
	if err := <-granted; err != nil {
		t.Fatalf("waiter Lock: %v", err)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Errorf("waiter Unlock: %v", err)
	}
}
