package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestProgressWhileServerDown: while the only server is down, a session
// whose connection dropped is still alive (not expired) but not connected,
// and the locks go quiet; once it is back, every session is connected
// again and the locks turn over. BenchmarkTenThousandSessions tells a
// restart still reconnecting from a liveness bug by these counts.
func TestProgressWhileServerDown(t *testing.T) {
	ens := enstest.Start(t, 1)
	run := shortRun(t, "fair-lock", 20, time.Minute)
	run.SessionTimeout = 30 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu                       sync.Mutex
		killed, back             bool
		sawDown, sawQuiet, sawUp bool
		down                     Progress
		backErr                  = make(chan error, 1)
	)
	_, err := Run(ctx, run, Options{
		Servers:  ens.Servers(),
		Interval: 200 * time.Millisecond,
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.State != "running" {
				return
			}
			switch {
			case !killed && p.Ops > 20 && p.SessionsConnected == p.Clients:
				killed = true
				go func() {
					if err := ens.Kill(1); err != nil {
						backErr <- err
						return
					}
					time.Sleep(QuietLock + time.Second)
					rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
					defer rcancel()
					err := ens.Restart(rctx, 1)
					mu.Lock()
					back = true
					mu.Unlock()
					backErr <- err
				}()
			case killed && !back:
				if p.SessionsConnected == 0 && p.SessionsAlive == p.Clients {
					sawDown, down = true, p
				}
				if p.LocksQuiet == run.Locks {
					sawQuiet = true
				}
			case back && p.SessionsConnected == p.Clients && p.LocksQuiet == 0:
				sawUp = true
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !killed {
		t.Fatalf("the server was never killed")
	}
	if err := <-backErr; err != nil {
		t.Fatalf("kill or restart: %v", err)
	}
	if !sawDown {
		t.Errorf("no progress while the server was down with 0 sessions connected and all %d alive", run.Clients)
	}
	if !sawQuiet {
		t.Errorf("LocksQuiet never reached %d while the server was down (last down progress: %+v)", run.Locks, down.LocksQuiet)
	}
	if !sawUp {
		t.Errorf("after the restart, never every session connected with no lock quiet")
	}
}
