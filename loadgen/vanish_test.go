package loadgen

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
	"github.com/zkherd/zkherd/recipes"
)

// TestServersVanishMidWindow (issue 22, finding 2): a proxy in front of
// the only member cuts every connection a few seconds into the window and
// refuses every new one until the end. The run must end within about the
// session timeout of the window's end (not minutes), say that the
// servers were unreachable for part of the window, and report the checks
// it could not run as not checked, never as 0 found.
func TestServersVanishMidWindow(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proxy, err := faultproxy.New(ctx, ens.Servers()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	run := shortRun(t, "fair-lock", 10, 10*time.Second)
	run.SessionTimeout = 6 * time.Second

	var once sync.Once
	var mu sync.Mutex
	var cutAt time.Time
	cut := func() {
		mu.Lock()
		defer mu.Unlock()
		cutAt = time.Now()
		proxy.OnRequest(func(faultproxy.Request) faultproxy.Action { return faultproxy.CutBefore })
		proxy.CutAll()
	}
	res, err := Run(ctx, run, Options{
		Servers:  []string{proxy.Addr()},
		Members:  ens.Servers(),
		Interval: 200 * time.Millisecond,
		Progress: func(p Progress) {
			// 6 s into the 10 s window, on the run's clock (a loaded
			// machine delivers progress late): the window ends before
			// the servers have been gone a session timeout (no
			// watchdog).
			if p.State == "running" {
				once.Do(func() { time.AfterFunc(6*time.Second-p.Window, cut) })
			}
		},
	})
	mu.Lock()
	defer mu.Unlock()
	took := time.Since(cutAt)
	if cutAt.IsZero() {
		t.Fatalf("the servers were never cut (err %v)", err)
	}
	t.Logf("Run returned after %v from the cut: err %v", took.Round(time.Second), err)
	if limit := 10*time.Second + 2*run.SessionTimeout + 10*time.Second; took > limit {
		t.Errorf("the run ended %v after the cut, want within %v (the drain bounded by the session timeout)", took.Round(time.Second), limit)
	}
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	t.Logf("checks %+v notes %q unreachable %v", res.Checks, res.Notes, res.Unreachable)
	if res.Metrics == nil {
		t.Errorf("no metrics: the window's figures must be reported")
	}
	// The servers were gone from the cut to the window's end (less the
	// moments the run takes to notice a cut connection).
	cutOff := res.Stop.Sub(cutAt)
	if cutOff < time.Second {
		t.Fatalf("the cut came %v before the window's end: too late to judge (progress reached the test late)", cutOff)
	}
	if res.Unreachable < cutOff-3*time.Second || res.Unreachable > cutOff+time.Second {
		t.Errorf("Unreachable = %v, want about the %v from the cut to the window's end", res.Unreachable, cutOff.Round(100*time.Millisecond))
	}
	if res.Checks.LeftoverZnodes != -1 || !slices.ContainsFunc(res.Checks.NotChecked, func(s string) bool { return strings.HasPrefix(s, "leftover znodes:") }) {
		t.Errorf("leftover znodes %d, not checked %q: want -1 and a line saying they were not checked", res.Checks.LeftoverZnodes, res.Checks.NotChecked)
	}
	if !errors.Is(err, ErrServerLost) || !strings.Contains(err.Error(), "the next zkherd load on them removes it") {
		t.Errorf("err = %v, want ErrServerLost saying the namespace stays", err)
	}
	if res.Checks.Passed {
		t.Errorf("Checks.Passed = true for a run whose servers vanished, want not passed")
	}
}

// TestAdminSessionExpiredBeforeChecks: the servers expire the run's admin
// session before the checks (in TestQueueChaos a member's restart
// outlasted the next kill and the ensemble lost its quorum for longer
// than the session timeout). A new admin session checks the run and
// removes its namespace: before, the checks said "no connection to the
// servers" while they answered, and the namespace stayed.
func TestAdminSessionExpiredBeforeChecks(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proxy, err := faultproxy.New(ctx, ens.Servers()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	run := shortRun(t, "fair-lock", 6, 5*time.Second)
	run.SessionTimeout = 8 * time.Second

	var once sync.Once
	expired := make(chan error, 1)
	res, err := Run(ctx, run, Options{
		Servers:  []string{proxy.Addr()},
		Interval: 200 * time.Millisecond,
		Progress: func(p Progress) {
			if p.State != "running" {
				return
			}
			once.Do(func() {
				// The admin session is the run's first: the lowest id.
				admin := int64(0)
				for _, s := range proxy.Sessions() {
					if admin == 0 || s.ID < admin {
						admin = s.ID
					}
				}
				expired <- proxy.ExpireSession(ctx, admin)
			})
		},
	})
	select {
	case eerr := <-expired:
		if eerr != nil {
			t.Fatalf("expire the admin session: %v", eerr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the admin session was never expired (err %v)", err)
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// (The window may say the servers were unreachable while the admin
	// session's connection was down, between the expiry and its
	// reconnection learning of it: that is the admin's view.)
	if res.Checks.LeftoverZnodes != 0 || slices.ContainsFunc(res.Checks.NotChecked, func(s string) bool { return strings.HasPrefix(s, "leftover znodes:") }) {
		t.Errorf("leftover znodes %d, not checked %q: want the leftovers checked by a new admin session",
			res.Checks.LeftoverZnodes, res.Checks.NotChecked)
	}
	s, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if runs, _, err := s.Conn().Children("/zkherd/runs"); err == nil && len(runs) != 0 {
		t.Errorf("namespaces left on the servers: %v", runs)
	}
}
