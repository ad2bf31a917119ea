package recipes

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
	"github.com/zkherd/zkherd/faults"
)

// TestLostReplyOnLaggingMember reproduces bugs 5, 6 and 7 of issue 14 as
// they happen: a write's reply is lost on the connection to the leader,
// and the client reconnects to a follower that applies the leader's
// transactions late (faults.Quorum's lag-member). Reading back there
// without a sync sees the write not done. Before the fixes: Take lost the
// item (its second delete got NoNode, "taken by another", and it waited on
// an empty queue until ctx ended); Ack reported ErrLost for the item it
// had removed itself; HerdLock waited on its own node until ctx ended.
func TestLostReplyOnLaggingMember(t *testing.T) {
	q := faults.NewQuorum(context.Background())
	t.Cleanup(func() { q.Close() })
	ens := enstest.StartWith(t, ensemble.Options{Nodes: 3, PeerAddr: q.PeerAddr})
	ctx := testCtx(t, 120*time.Second)
	leader, err := ens.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower := 1
	if leader == 1 {
		follower = 2
	}
	servers := ens.Servers()
	const lag = 2 * time.Second
	if err := q.Lag(follower, lag); err != nil {
		t.Fatal(err)
	}
	observer := newTestSession(t, servers[follower-1:follower])

	// session connects through a proxy to the leader first, and to the
	// lagging follower on every later connection.
	session := func(t *testing.T) (*Session, *faultproxy.Proxy) {
		p := newProxy(t, servers[leader-1])
		var dials atomic.Int32
		dial := func(network, _ string, timeout time.Duration) (net.Conn, error) {
			addr := servers[follower-1]
			if dials.Add(1) == 1 {
				addr = p.Addr()
			}
			return net.DialTimeout(network, addr, timeout)
		}
		return newTestSession(t, []string{p.Addr()}, WithDialer(dial)), p
	}
	// applied waits until the lagging follower shows path (or its absence).
	applied := func(t *testing.T, path string, exists bool) {
		waitFor(t, 10*lag, "the follower to apply "+path, func() bool {
			ok, _, err := observer.Conn().Exists(path)
			return err == nil && ok == exists
		})
	}

	t.Run("take", func(t *testing.T) {
		s, p := session(t)
		path := testPath(t)
		qu := NewQueue(s, path)
		item, err := qu.Put(ctx, []byte("item"))
		if err != nil {
			t.Fatal(err)
		}
		applied(t, item, true)
		cut := p.CutAfter(faultproxy.OpDelete, 1)
		defer mustCut(t, cut)
		takeCtx, cancel := context.WithTimeout(ctx, 4*lag)
		defer cancel()
		data, err := qu.Take(takeCtx)
		if err != nil || string(data) != "item" {
			t.Fatalf("Take = %q, %v; want the item (its delete's reply was lost, read back on a lagging member)", data, err)
		}
	})
	t.Run("ack", func(t *testing.T) {
		s, p := session(t)
		path := testPath(t)
		qu := NewQueue(s, path)
		if _, err := qu.Put(ctx, []byte("item")); err != nil {
			t.Fatal(err)
		}
		c, err := qu.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		applied(t, c.Item()+ClaimSuffix, true)
		defer mustCut(t, p.CutAfter(faultproxy.OpMulti, 1))
		if err := c.Ack(ctx); err != nil {
			t.Fatalf("Ack = %v, want nil (its transaction was applied, the reply lost)", err)
		}
	})
	t.Run("herd", func(t *testing.T) {
		s, p := session(t)
		path := testPath(t)
		if err := ensurePath(ctx, s, path); err != nil {
			t.Fatal(err)
		}
		applied(t, path, true)
		l := NewHerdLock(s, path)
		defer mustCut(t, p.CutAfter(faultproxy.OpCreate, 1))
		lockCtx, cancel := context.WithTimeout(ctx, 4*lag)
		defer cancel()
		if err := l.Lock(lockCtx); err != nil {
			t.Fatalf("Lock = %v, want it held (its create was applied, the reply lost)", err)
		}
		if err := l.Unlock(ctx); err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Fatal(err)
		}
		applied(t, joinPath(path, HerdNodeName), false)
	})
}

// mustCut fails t unless the cut happened.
func mustCut(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	default:
		t.Errorf("the reply was not cut: the test did not test anything")
	}
}
