package distrib

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// proxiedRun starts a one-process run whose coordination goes through a
// fault proxy in front of a real server, and opens its step 0.
func proxiedRun(t *testing.T, id string, timeout time.Duration) (*Member, *faultproxy.Proxy, *recipes.Session) {
	t.Helper()
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := faultproxy.New(ctx, ens.Servers()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	open := func(ctx context.Context) (*recipes.Session, error) {
		return recipes.NewSession(ctx, []string{p.Addr()}, recipes.WithSessionTimeout(timeout))
	}
	s, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	plan := Plan{RunID: id, Processes: 1, Title: "fair-lock", Runs: []scenarios.Run{fairLockRun(t, 1, time.Second)}}
	m, err := Start(ctx, s, "", plan)
	if err != nil {
		t.Fatal(err)
	}
	m.ReopenWith(open)
	t.Cleanup(func() { m.Finish(context.Background()) })
	if err := m.Barrier(ctx, 0, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return m, p, session(t, ens.Servers()) // a direct session, to look
}

// checkOnePart checks that run id's step 0 holds exactly the part want.
func checkOnePart(t *testing.T, direct *recipes.Session, id string, want *Part) {
	t.Helper()
	dir := loadgen.Root + "/" + id + "/steps/0/parts"
	children, _, err := direct.Conn().Children(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 1 || children[0] != "p-000" {
		t.Fatalf("parts %v, want exactly [p-000]", children)
	}
	data, _, err := direct.Conn().Get(dir + "/p-000")
	if err != nil {
		t.Fatal(err)
	}
	wantData, _ := json.Marshal(want)
	if !bytes.Equal(data, wantData) {
		t.Errorf("published %s, want %s", data, wantData)
	}
}

// TestPublishReplyLost is a publish whose create reached the server but
// whose reply was lost with the connection: Publish must find out that
// its part is there (not fail, not publish twice).
func TestPublishReplyLost(t *testing.T) {
	m, p, direct := proxiedRun(t, "reply-lost", 10*time.Second)
	part := &Part{Host: "h", PID: 1, Ops: 42}
	cut := p.CutAfter(faultproxy.OpCreate, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Publish(ctx, 0, part); err != nil {
		t.Fatalf("Publish over a connection cut after its create: %v", err)
	}
	select {
	case <-cut:
	default:
		t.Fatal("the proxy never cut the create's connection: the test tested nothing")
	}
	checkOnePart(t, direct, "reply-lost", part)
}

// TestPublishAcrossExpiry is a publish while the servers cannot be
// reached for longer than the coordination session's timeout: Publish
// waits, opens a new session, makes the process's ephemeral nodes again
// and publishes once; the starter's Collect, cut in turn, still collects.
func TestPublishAcrossExpiry(t *testing.T) {
	const timeout = 4 * time.Second
	m, p, direct := proxiedRun(t, "expiry", timeout)
	first := m.sess()
	p.SetDropping(true)
	go func() {
		// Long enough for the servers to expire the session.
		time.Sleep(3 * timeout)
		p.SetDropping(false)
	}()
	part := &Part{Host: "h", PID: 1, Ops: 7}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := m.Publish(ctx, 0, part); err != nil {
		t.Fatalf("Publish while the servers were unreachable for %v: %v", 3*timeout, err)
	}
	if m.sess() == first {
		t.Error("the member kept its expired session; want a new one")
	}
	checkOnePart(t, direct, "expiry", part)
	for _, node := range []string{m.node, m.root + "/" + loadgen.OwnerMark} {
		if ok, _, err := direct.Conn().Exists(node); err != nil || !ok {
			t.Errorf("%s not made again in the new session (exists %v, %v)", node, ok, err)
		}
	}
	// The starter's collect loses its connection on its first listing.
	p.CutBefore(faultproxy.OpGetChildren2, 1)
	parts, lost, err := m.Collect(ctx, 0, time.Minute)
	if err != nil || len(parts) != 1 || len(lost) != 0 || parts[0].Ops != 7 {
		t.Fatalf("Collect after a cut: %d parts, lost %v, %v; want the one part", len(parts), lost, err)
	}
}

// TestCollectWaitsForReturningProcess is a joined process whose
// coordination session ended before it published (the servers out of
// reach at a large run's end): it makes its member node again in a new
// session and publishes. The starter, which saw the node gone, must not
// call it lost at once and merge its last live part in its place.
func TestCollectWaitsForReturningProcess(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan := Plan{RunID: "returning", Processes: 2, Title: "fair-lock", Runs: []scenarios.Run{fairLockRun(t, 1, time.Second)}}
	starter, err := Start(ctx, session(t, ens.Servers()), "", plan)
	if err != nil {
		t.Fatal(err)
	}
	defer starter.Finish(context.Background())
	first, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	joiner, err := Join(ctx, first, "", "returning")
	if err != nil {
		t.Fatal(err)
	}
	barrier := make(chan error, 1)
	go func() { barrier <- joiner.Barrier(ctx, 0, time.Minute) }()
	if err := starter.Barrier(ctx, 0, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := <-barrier; err != nil {
		t.Fatal(err)
	}
	if err := starter.Publish(ctx, 0, &Part{Host: "s", PID: 1}); err != nil {
		t.Fatal(err)
	}
	// The joiner's session ends; 2 s later it is back in a new one
	// (reattach), and publishes.
	first.Close()
	back := make(chan error, 1)
	go func() {
		time.Sleep(2 * time.Second)
		s, err := recipes.NewSession(ctx, ens.Servers())
		if err != nil {
			back <- err
			return
		}
		joiner.reattach(ctx, s)
		joiner.s.Store(s)
		joiner.ownS = true // Leave closes it
		back <- joiner.Publish(ctx, 0, &Part{Host: "j", PID: 2, Ops: 3})
	}()
	parts, lost, err := starter.Collect(ctx, 0, time.Minute)
	if berr := <-back; berr != nil {
		t.Fatal(berr)
	}
	defer joiner.Leave()
	if err != nil || len(lost) != 0 || len(parts) != 2 {
		t.Fatalf("Collect: %d parts, lost %v, %v; want both parts: the joiner came back", len(parts), lost, err)
	}
}
