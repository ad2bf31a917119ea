package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

var waiterRow = regexp.MustCompile(`[├└]▶wait\s.*`)

// TestInspectUnderChurnInTmux drives "zkherd inspect" on a 3-node ensemble
// while "zkherd load" runs 200 clients (issue 10): during a fair lock at
// least 90% of the waiters on screen show their watch confirmed by the
// servers or expected (newer than the servers' watch lists), and none is
// flagged "no watch"; during herd-children the lock is a herd, not waiters
// with missing watches; during a queue run the queue is on screen in every
// capture.
func TestInspectUnderChurnInTmux(t *testing.T) {
	bin := buildZkherd(t)
	ens := enstest.Start(t, 3)
	server := ens.ConnectString()
	capture, keys := tmuxSession(t, 120, 40, bin+" inspect --server "+server)

	load := func(t *testing.T, scenario string) (stop func()) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, bin, "load", "--server", server, "--scenario", scenario,
			"--clients", "200", "--duration", "60s", "--no-tui", "--out", filepath.Join(t.TempDir(), "out"))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 30 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("start load: %v", err)
		}
		return func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			cancel()
			if t.Failed() {
				t.Logf("load output:\n%s", out.String())
			}
		}
	}

	t.Run("fair-lock", func(t *testing.T) {
		defer load(t, "fair-lock")()
		keys("2")
		var screen string
		judged := 0
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && judged < 3; {
			time.Sleep(2 * time.Second)
			screen = capture()
			rows := waiterRow.FindAllString(screen, -1)
			if len(rows) < 10 {
				continue // the queue is still forming
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
		}
		if judged == 0 {
			t.Fatalf("the fair lock's waiters never showed:\n%s", screen)
		}
		t.Logf("capture:\n%s", screen)
	})

	t.Run("herd-children", func(t *testing.T) {
		defer load(t, "herd-children")()
		keys("2")
		var screen string
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
			time.Sleep(2 * time.Second)
			screen = capture()
			if strings.Contains(screen, "herd: child") {
				break
			}
		}
		t.Logf("capture:\n%s", screen)
		if !strings.Contains(screen, "herd: child") || !strings.Contains(screen, "! herd") {
			t.Errorf("herd-children is not shown as a herd")
		}
		if strings.Contains(screen, "no watch") {
			t.Errorf("herd-children waiters flagged as missing watches")
		}
	})

	t.Run("queue", func(t *testing.T) {
		defer load(t, "queue")()
		keys("3")
		seen := 0
		var screen string
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && seen < 5; {
			time.Sleep(2 * time.Second)
			screen = capture()
			if strings.Contains(screen, "Queues  0 queues") && seen == 0 {
				continue // the run is still starting
			}
			seen++
			if strings.Contains(screen, "no queue found") || strings.Contains(screen, "Queues  0 queues") {
				t.Errorf("capture %d has no queue:\n%s", seen, screen)
			}
		}
		t.Logf("capture:\n%s", screen)
		if seen == 0 {
			t.Errorf("the queue never showed")
		}
	})
}
