package cluster_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/cluster"
	"github.com/zkherd/zkherd/ensemble/enstest"
)

// notices collects a Controller's reports.
type notices struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func (n *notices) report(s string) {
	n.mu.Lock()
	n.lines = append(n.lines, s)
	n.mu.Unlock()
	select {
	case n.added <- struct{}{}:
	default:
	}
}

// waitFor waits until a line contains want.
func (n *notices) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		n.mu.Lock()
		for _, l := range n.lines {
			if strings.Contains(l, want) {
				n.mu.Unlock()
				return
			}
		}
		all := strings.Join(n.lines, "\n")
		n.mu.Unlock()
		select {
		case <-n.added:
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no notice %q within a minute; notices:\n%s", want, all)
		}
	}
}

func (n *notices) count(sub string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, l := range n.lines {
		if strings.Contains(l, sub) {
			c++
		}
	}
	return c
}

// TestControllerReportsDeaths: a member whose JVM dies is reported live,
// with the new leader when it led; a member killed on request is reported
// as such, not as a death; requests need the token.
func TestControllerReportsDeaths(t *testing.T) {
	ens := enstest.Start(t, 3)
	n := &notices{added: make(chan struct{}, 1)}
	ctl := cluster.NewController(ens, "secret", n.report)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(2)
	go func() { defer wg.Done(); ctl.Watch(ctx, 200*time.Millisecond) }()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { defer wg.Done(); ctl.Serve(ctx, l) }()

	leader, err := ens.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, m := range ens.Members() {
		if m.ID == leader {
			pid = m.PID
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil { // a crash nobody asked for
		t.Fatal(err)
	}
	n.waitFor(t, "died: its process exited")
	n.waitFor(t, "leader is now member")

	rec := cluster.Record{Control: l.Addr().String(), Token: "wrong"}
	other := 1
	if other == leader {
		other = 2
	}
	if _, err := cluster.Send(ctx, rec, cluster.OpKill, other); err == nil || !strings.Contains(err.Error(), "bad token") {
		t.Fatalf("kill with a wrong token: err = %v, want bad token", err)
	}
	rec.Token = "secret"
	r, err := cluster.Send(ctx, rec, cluster.OpKill, other)
	if err != nil || r.State != "stopped" {
		t.Fatalf("kill on request: %+v, %v", r, err)
	}
	n.waitFor(t, "killed (now stopped) on request")
	time.Sleep(time.Second) // a few watch periods: the requested kill must not also be reported as a death
	if got := n.count("died"); got != 1 {
		t.Errorf("%d death notices, want 1 (the crash only):\n%s", got, strings.Join(n.lines, "\n"))
	}
}
