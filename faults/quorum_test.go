package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faults"
)

// lagEnsemble starts a 3-node ensemble whose quorum links go through a
// faults.Quorum, and returns it with the leader and a follower.
func lagEnsemble(t *testing.T) (ens *ensemble.Ensemble, q *faults.Quorum, leader, follower int) {
	t.Helper()
	q = faults.NewQuorum(context.Background())
	t.Cleanup(func() { q.Close() })
	ens = enstest.StartWith(t, ensemble.Options{Nodes: 3, PeerAddr: q.PeerAddr})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leader, err := ens.WaitLeader(ctx)
	if err != nil {
		t.Fatalf("WaitLeader: %v", err)
	}
	follower = 1
	if leader == 1 {
		follower = 2
	}
	return ens, q, leader, follower
}

// TestLagMember checks that a lagged follower answers reads with stale
// data for about the lag, keeps its clients' sessions and its place in the
// quorum, and that sync still brings a read up to date (the sync reply
// stays behind the commits).
func TestLagMember(t *testing.T) {
	ens, q, leader, follower := lagEnsemble(t)
	servers := ens.Servers()
	w := session(t, servers[leader-1:leader])     // writes on the leader
	r := session(t, servers[follower-1:follower]) // reads on the lagging follower
	const path = "/lagged"
	if _, err := w.Conn().Create(path, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := r.Conn().Sync(path); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got, _, err := r.Conn().Get(path); err != nil || string(got) != "0" {
		t.Fatalf("follower read before the lag = %q, %v; want \"0\"", got, err)
	}

	const lag = 1500 * time.Millisecond
	if err := q.Lag(follower, lag); err != nil {
		t.Fatalf("Lag: %v", err)
	}
	if _, err := w.Conn().Set(path, []byte("1"), -1); err != nil {
		t.Fatalf("set: %v", err)
	}
	written := time.Now()
	if got, _, err := r.Conn().Get(path); err != nil || string(got) != "0" {
		t.Fatalf("follower read right after the write = %q, %v; want the stale \"0\"", got, err)
	}
	// Fresh no earlier than the lag after the commit left the leader
	// (which was before the write returned); poll until then.
	var fresh time.Duration
	for deadline := time.Now().Add(20 * time.Second); ; {
		got, _, err := r.Conn().Get(path)
		if err != nil {
			t.Fatalf("follower read: %v", err)
		}
		if string(got) == "1" {
			fresh = time.Since(written)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower never saw the write")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if fresh < lag-200*time.Millisecond {
		t.Errorf("follower saw the write %v after it, want about the lag %v", fresh, lag)
	}
	t.Logf("stale reads for %v with a lag of %v", fresh, lag)

	// sync on the lagging member waits for the commits before it.
	if _, err := w.Conn().Set(path, []byte("2"), -1); err != nil {
		t.Fatalf("set: %v", err)
	}
	if _, err := r.Conn().Sync(path); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got, _, err := r.Conn().Get(path); err != nil || string(got) != "2" {
		t.Errorf("follower read after sync = %q, %v; want \"2\" (sync must stay behind the lagged commits)", got, err)
	}

	// Lagged for longer than the session timeout: the follower keeps its
	// place and its clients' sessions (pings pass at once).
	for i := range 6 {
		if _, err := w.Conn().Set(path, []byte{byte('a' + i)}, -1); err != nil {
			t.Fatalf("set: %v", err)
		}
		time.Sleep(sessionTimeout / 4)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if mode, err := ens.Mode(ctx, follower); err != nil || mode != "follower" {
		t.Errorf("lagging member's mode = %q, %v; want follower", mode, err)
	}
	if st := r.Conn().State(); st != zk.StateHasSession {
		t.Errorf("session on the lagging member is %v, want it alive", st)
	}
	st := q.Stats(follower)
	if st.Delayed == 0 || st.Passed == 0 || st.Unframed != 0 {
		t.Errorf("quorum proxy stats %+v: want packets delayed, pings passed, every link framed", st)
	}

	if err := q.Lag(follower, 0); err != nil {
		t.Fatalf("Lag 0: %v", err)
	}
	if _, err := w.Conn().Set(path, []byte("end"), -1); err != nil {
		t.Fatalf("set: %v", err)
	}
	if _, err := r.Conn().Sync(path); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got, _, err := r.Conn().Get(path); err != nil || string(got) != "end" {
		t.Errorf("follower read after the lag = %q, %v; want \"end\"", got, err)
	}
}
