package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/syncbuf"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

var (
	waiterRow = regexp.MustCompile(`[├└]▶wait\s.*`)
	// windowLine is a load's progress line once its clients are all
	// connected and its window runs.
	windowLine = regexp.MustCompile(`(?m)^\S+ running .* clients 200/200 `)
)

// TestInspectUnderChurnInTmux drives "zkherd inspect" on a 3-node ensemble
// while "zkherd load" runs 200 clients (issue 10): during a fair lock at
// least 90% of the waiters on screen show their watch confirmed by the
// servers or expected (newer than the servers' watch lists), and none is
// flagged "no watch"; during herd-children the lock is a herd, not waiters
// with missing watches; during a queue run the queue is on screen in every
// capture.
func TestInspectUnderChurnInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 3)
	server := ens.ConnectString()
	term := newTmuxScreen(t, 120, 40, bin+" inspect --server "+server)

	// load starts a 60 s run of scenario; running reports whether its
	// clients are connected and its window is under way (not ramping up,
	// not over), and stop ends it with sig and waits for it to exit.
	load := func(t *testing.T, scenario string) (running func() bool, stop func(sig os.Signal)) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, bin, "load", "--server", server, "--scenario", scenario,
			"--clients", "200", "--duration", "60s", "--no-tui", "--out", filepath.Join(t.TempDir(), "out"))
		out := &syncbuf.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 30 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("start load: %v", err)
		}
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			cmd.Wait()
		}()
		running = func() bool {
			select {
			case <-exited:
				return false
			default:
			}
			return windowLine.MatchString(out.String())
		}
		return running, func(sig os.Signal) {
			cmd.Process.Signal(sig)
			<-exited
			cancel()
			if t.Failed() {
				t.Logf("load output:\n%s", out.String())
			}
		}
	}
	// during waits until the load's window is under way (at most 2
	// minutes: a loaded machine ramps up slowly), then captures the screen
	// every 2 s while it lasts, until judge says it has seen enough; it
	// returns the last capture and how many were taken during the window.
	during := func(t *testing.T, running func() bool, judge func(screen string) (enough bool)) (screen string, seen int) {
		t.Helper()
		start := time.Now()
		for !running() {
			if time.Since(start) > 2*time.Minute {
				t.Fatalf("the load run never got its 200 clients running")
			}
			time.Sleep(500 * time.Millisecond)
		}
		for running() {
			time.Sleep(2 * time.Second)
			screen = term.screen()
			if !running() {
				break // taken after the window: it says nothing
			}
			seen++
			if judge(screen) {
				break
			}
		}
		return screen, seen
	}

	t.Run("fair-lock", func(t *testing.T) {
		running, stop := load(t, "fair-lock")
		defer stop(os.Interrupt)
		term.press("2")
		judged := 0
		screen, _ := during(t, running, func(screen string) bool {
			rows := waiterRow.FindAllString(screen, -1)
			if len(rows) < 10 {
				return false // the queue is still forming
			}
			judged++
			good := 0
			for _, r := range rows {
				if strings.Contains(r, "confirmed") || strings.Contains(r, "expected") {
					good++
				}
			}
			if good*10 < len(rows)*9 {
				t.Errorf("%d of %d waiters on screen with a confirmed or expected watch, want at least 90%%:\n%s", good, len(rows), screen)
			}
			if strings.Contains(screen, "no watch") {
				t.Errorf("a waiter is flagged no watch:\n%s", screen)
			}
			return judged == 3
		})
		if judged == 0 {
			t.Fatalf("the fair lock's waiters never showed during the load's run:\n%s", screen)
		}
		t.Logf("capture:\n%s", screen)
	})

	t.Run("herd-children", func(t *testing.T) {
		running, stop := load(t, "herd-children")
		defer stop(os.Interrupt)
		term.press("2")
		screen, seen := during(t, running, func(screen string) bool {
			return strings.Contains(screen, "herd: child")
		})
		t.Logf("capture (%d taken during the load's run):\n%s", seen, screen)
		if !strings.Contains(screen, "herd: child") || !strings.Contains(screen, "! herd") {
			t.Errorf("herd-children was not shown as a herd during the load's run")
		}
		if strings.Contains(screen, "no watch") {
			t.Errorf("herd-children waiters flagged as missing watches")
		}
	})

	t.Run("queue", func(t *testing.T) {
		running, stop := load(t, "queue")
		// Killed, not interrupted: an interrupted run first removes the
		// thousands of items its 200 clients queued (30 s), and nothing
		// runs on this ensemble after it. (The runs above are interrupted:
		// a killed run's waiters would stay listed, unwatched, until their
		// sessions expire.)
		defer stop(os.Kill)
		term.press("3")
		shown := 0
		screen, _ := during(t, running, func(screen string) bool {
			if strings.Contains(screen, "Queues  0 queues") && shown == 0 {
				return false // the queue's directory is still to be found
			}
			shown++
			if strings.Contains(screen, "no queue found") || strings.Contains(screen, "Queues  0 queues") {
				t.Errorf("capture %d has no queue:\n%s", shown, screen)
			}
			return shown == 5
		})
		t.Logf("capture:\n%s", screen)
		if shown == 0 {
			t.Errorf("the queue never showed during the load's run")
		}
	})
}
