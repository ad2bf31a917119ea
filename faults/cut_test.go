package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// writeKinds are the writes cut-connections can cut on: each does one
// request of its kind on path (which exists, holding "old", before do),
// and done tells whether it was carried out.
var writeKinds = []struct {
	on   string
	do   func(conn *zk.Conn, path string) error
	done func(conn *zk.Conn, path string) (bool, error)
}{
	{
		on: scenarios.FaultOnCreate,
		do: func(conn *zk.Conn, path string) error {
			_, err := conn.Create(path+"/child", nil, 0, zk.WorldACL(zk.PermAll))
			return err
		},
		done: func(conn *zk.Conn, path string) (bool, error) {
			ok, _, err := conn.Exists(path + "/child")
			return ok, err
		},
	},
	{
		on: scenarios.FaultOnDelete,
		do: func(conn *zk.Conn, path string) error { return conn.Delete(path, -1) },
		done: func(conn *zk.Conn, path string) (bool, error) {
			ok, _, err := conn.Exists(path)
			return !ok, err
		},
	},
	{
		on: scenarios.FaultOnSetData,
		do: func(conn *zk.Conn, path string) error {
			_, err := conn.Set(path, []byte("new"), -1)
			return err
		},
		done: func(conn *zk.Conn, path string) (bool, error) {
			data, _, err := conn.Get(path)
			return string(data) == "new", err
		},
	},
	{
		on: scenarios.FaultOnMulti,
		do: func(conn *zk.Conn, path string) error {
			_, err := conn.Multi(&zk.SetDataRequest{Path: path, Data: []byte("multi"), Version: -1})
			return err
		},
		done: func(conn *zk.Conn, path string) (bool, error) {
			data, _, err := conn.Get(path)
			return string(data) == "multi", err
		},
	},
}

// cutEach arms a cut on each write kind through member's connections and
// checks that the write is carried out and its reply lost. s's session
// runs through n to that member.
func cutEach(t *testing.T, n *faults.Network, member int, s, check *recipes.Session) {
	conn := s.Conn()
	for _, wk := range writeKinds {
		t.Run(wk.on, func(t *testing.T) {
			path := "/cut-" + wk.on
			if _, err := check.Conn().Create(path, []byte("old"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("create %s: %v", path, err)
			}
			defer func() {
				check.Conn().Delete(path+"/child", -1)
				check.Conn().Delete(path, -1)
			}()
			if err := s.WaitConnected(context.Background()); err != nil {
				t.Fatal(err)
			}
			x, err := faults.New(faults.Options{
				Faults:  []scenarios.Fault{{At: 0, Kind: scenarios.CutConnections, On: wk.on, Member: member}},
				Start:   time.Now(),
				Network: n,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan *faults.Summary, 1)
			go func() { res <- x.Run(ctx) }()
			// The cut is armed once Run has started: until then a write
			// goes through, and is undone before the next try.
			var werr error
			for tries := 0; tries < 200; tries++ {
				werr = wk.do(conn, path)
				if werr == nil {
					reset(t, check.Conn(), path)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				break
			}
			cancel()
			sum := <-res
			if !errors.Is(werr, zk.ErrConnectionClosed) {
				t.Fatalf("%s: got %v, want its connection cut", wk.on, werr)
			}
			if err := s.WaitConnected(context.Background()); err != nil {
				t.Fatal(err)
			}
			if sum.ConnectionsCut != 1 {
				t.Errorf("ConnectionsCut = %d, want 1", sum.ConnectionsCut)
			}
			if _, err := check.Conn().Sync(path); err != nil {
				t.Fatal(err)
			}
			if ok, err := wk.done(check.Conn(), path); err != nil || !ok {
				t.Errorf("the cut %s was not carried out (%v): its reply, not the request, should be lost", wk.on, err)
			}
		})
	}
}

// reset puts path back as cutEach's writes found it.
func reset(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	conn.Delete(path+"/child", -1)
	if _, err := conn.Create(path, []byte("old"), 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("reset %s: %v", path, err)
	}
	if _, err := conn.Set(path, []byte("old"), -1); err != nil {
		t.Fatalf("reset %s: %v", path, err)
	}
}

func TestCutOnEveryWriteKind(t *testing.T) {
	ens := enstest.Start(t, 1)
	n := network(t, ens.Servers())
	s := session(t, n.Addrs())
	cutEach(t, n, 0, s, session(t, ens.Servers()))
}

// TestLostReplyOnLaggingMember cuts writes' replies on the connections to a
// lagging follower only: the writes are carried out all the same.
func TestLostReplyOnLaggingMember(t *testing.T) {
	ens, q, leader, follower := lagEnsemble(t)
	n := network(t, ens.Servers())
	if err := q.Lag(follower, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	s := session(t, n.Addrs()[follower-1:follower])
	check := session(t, ens.Servers()[leader-1:leader])
	cutEach(t, n, follower, s, check)
	if st := q.Stats(follower); st.Delayed == 0 {
		t.Errorf("no packet to the lagging member was delayed: %+v", st)
	}
}
