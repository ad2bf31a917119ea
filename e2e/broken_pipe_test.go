package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
)

// TestClusterUpBrokenPipe is "zkherd cluster up 2>&1 | tee out.txt" and
// Ctrl-C: tee dies with zkherd, whose next line ("stopping the
// ensemble...") goes to a pipe with no reader. That write must not kill
// zkherd (SIGPIPE) before it stops the ensemble: no ZooKeeper JVM, no
// temporary ensemble directory and no cluster record may be left.
func TestClusterUpBrokenPipe(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	tmp := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "cluster", "up", "--fsync=false")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	w.Close()
	sc := bufio.NewScanner(r)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "connect string") {
			break
		}
	}
	r.Close() // tee is gone
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("interrupt: %v", err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("cluster up died of %v, want a graceful stop\noutput:\n%s", ws.Signal(), strings.Join(seen, "\n"))
	} else if err == nil || cmd.ProcessState.ExitCode() != exit.Interrupted {
		t.Logf("exit: %v", err) // the status is not the point; what is left behind is
	}

	if dirs, _ := filepath.Glob(filepath.Join(tmp, "zkherd-ensemble-*")); len(dirs) > 0 {
		t.Errorf("ensemble directories left: %v", dirs)
	}
	if recs, _ := filepath.Glob(filepath.Join(tmp, "zkherd-*", "clusters", "*.json")); len(recs) > 0 {
		t.Errorf("cluster records left: %v", recs)
	}
	// The JVM dies with zkherd (parent-death signal) but may take a moment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", "--", tmp).Output()
		if len(strings.TrimSpace(string(out))) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left running: %s", out)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
}
