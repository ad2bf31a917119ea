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
	run := shortRun(t, "fair-lock", 10, 8*time.Second)
	run.SessionTimeout = 6 * time.Second

	var once sync.Once
	var cutAt, running time.Time
	res, err := Run(ctx, run, Options{
		Servers:  []string{proxy.Addr()},
		Members:  ens.Servers(),
		Interval: 200 * time.Millisecond,
		Progress: func(p Progress) {
			if p.State == "running" && running.IsZero() {
				running = time.Now()
			}
			// 4 s into the 8 s window: it ends before the servers have
			// been gone a session timeout (no watchdog).
			if p.State == "running" && time.Since(running) > 4*time.Second {
				once.Do(func() {
					cutAt = time.Now()
					proxy.OnRequest(func(faultproxy.Request) faultproxy.Action { return faultproxy.CutBefore })
					proxy.CutAll()
				})
			}
		},
	})
	took := time.Since(cutAt)
	if cutAt.IsZero() {
		t.Fatalf("the servers were never cut (err %v)", err)
	}
	t.Logf("Run returned after %v from the cut: err %v", took.Round(time.Second), err)
	if limit := 8*time.Second + 2*run.SessionTimeout + 10*time.Second; took > limit {
		t.Errorf("the run ended %v after the cut, want within %v (the drain bounded by the session timeout)", took.Round(time.Second), limit)
	}
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	t.Logf("checks %+v notes %q unreachable %v", res.Checks, res.Notes, res.Unreachable)
	if res.Metrics == nil {
		t.Errorf("no metrics: the window's figures must be reported")
	}
	if res.Unreachable < time.Second {
		t.Errorf("Unreachable = %v, want the seconds of the window the servers were cut off", res.Unreachable)
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
