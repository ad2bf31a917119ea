package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestInspectInTmux drives "zkherd inspect" in a real terminal (tmux) against
// a live ensemble while "zkherd load" runs a 200-client fair lock, and checks
// the screen shows the lock's holder and its waiters (issue 5).
func TestInspectInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	server := ens.ConnectString()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	load := exec.CommandContext(ctx, bin, "load", "--server", server, "--scenario", "fair-lock",
		"--clients", "200", "--duration", "90s", "--no-tui", "--out", filepath.Join(t.TempDir(), "out"))
	var loadOut strings.Builder
	load.Stdout, load.Stderr = &loadOut, &loadOut
	load.Cancel = func() error { return load.Process.Signal(os.Interrupt) }
	load.WaitDelay = 30 * time.Second
	if err := load.Start(); err != nil {
		t.Fatalf("start load: %v", err)
	}
	defer func() {
		load.Process.Signal(os.Interrupt) // first Ctrl-C: stop, clean up, report
		load.Wait()
	}()

	s := newTmuxScreen(t, 120, 40, bin+" inspect --server "+server)
	var screen string
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		s.keys("2") // the Locks view
		time.Sleep(time.Second)
		screen = s.screen()
		if waiting(screen) >= 150 {
			break // most of the 200 clients are queued
		}
	}
	t.Logf("captured screen:\n%s", screen)
	for _, want := range []string{"Locks", "curator lock or election", "┌ HOLD", "├▶wait", "holding →"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if got := waiting(screen); got < 150 {
		t.Errorf("screen shows %d waiting, want at least 150 of the 200 clients", got)
	}
	if got := strings.Count(screen, "├▶wait"); got < 5 {
		t.Errorf("screen shows %d waiters, want at least 5 of the 200 clients", got)
	}

	s.keys("q")
	quitBy := time.Now().Add(10 * time.Second)
	for time.Now().Before(quitBy) {
		if _, err := s.run("has-session", "-t", "main"); err != nil {
			return // inspect quit on q
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("zkherd inspect did not quit on q")
}

// waiting reads N from the chain header "1 holding → N waiting".
func waiting(screen string) int {
	_, rest, ok := strings.Cut(screen, "holding → ")
	if !ok {
		return 0
	}
	var n int
	fmt.Sscanf(rest, "%d waiting", &n)
	return n
}
