package launch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/syncbuf"
)

// syncBuffer is an output shared by the group's streams.
type syncBuffer = syncbuf.Buffer

func TestLocalOutputAndEnvironment(t *testing.T) {
	var out syncBuffer
	l := Local{Executable: "/bin/sh", Count: 2, Output: &out}
	if err := l.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	g, err := l.Start(context.Background(), Join{
		Args: []string{"-c", `echo "out $SECRET"; echo err >&2; printf 'no newline \033[8m'; exit 3`},
		Env:  map[string]string{"SECRET": "s3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = g.Close(time.Minute, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "process 2: exit status 3") {
		t.Errorf("Close() = %v, want it to name process 2's exit status 3", err)
	}
	got := out.String()
	for _, want := range []string{"[process 2] out s3\n", "[process 3] out s3\n", "[process 2] err\n",
		"[process 3] no newline \\x1b[8m\n", "[process 2] exited with status 3\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output has no %q:\n%s", want, got)
		}
	}
}

func TestLocalCheck(t *testing.T) {
	plain := filepath.Join(t.TempDir(), "zkherd")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, exe := range []string{"/nonexistent/zkherd", "/", plain} {
		if err := (Local{Executable: exe, Count: 1}).Check(context.Background()); err == nil || !strings.Contains(err.Error(), exe+" cannot be run") {
			t.Errorf("Check(%s) = %v, want it to say it cannot be run", exe, err)
		}
	}
}

// TestCloseKills: a process that ignores the interrupt is killed once
// the grace is over, with whatever it started (its process group).
func TestCloseKills(t *testing.T) {
	var out syncBuffer
	g, err := Local{Executable: "/bin/sh", Count: 1, Output: &out}.Start(context.Background(), Join{
		Args: []string{"-c", `trap '' INT; sleep 600 & echo "child $!"; wait`},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &out, "child ", 1) // the trap is set
	if err := g.Close(0, 200*time.Millisecond); err == nil {
		t.Errorf("Close() = nil, want the kill named")
	}
	if !strings.Contains(out.String(), "killed") {
		t.Errorf("output:\n%s\nwant the kill said", out.String())
	}
	var child int
	for _, l := range strings.Split(out.String(), "\n") {
		if _, rest, ok := strings.Cut(l, "child "); ok {
			child = atoi(rest)
		}
	}
	if child == 0 {
		t.Fatalf("no child pid in:\n%s", out.String())
	}
	// The sleep was in the group: killed too (a zombie until init reaps
	// it, so wait for it to be gone rather than only signalled).
	deadline := time.Now().Add(time.Minute)
	for syscall.Kill(child, 0) == nil && !zombie(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the process's child %d still runs", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestContextInterrupts: the starter's context cancelled interrupts the
// processes at once; they exit on their own.
func TestContextInterrupts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	g, err := Local{Executable: "/bin/sh", Count: 2, Output: &out}.Start(ctx, Join{
		Args: []string{"-c", `trap 'echo interrupted; exit 0' INT; echo ready; while :; do sleep 0.05; done`},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &out, "ready", 2)
	cancel()
	select {
	case <-g.Exited():
	case <-time.After(time.Minute):
		t.Fatal("the processes did not stop on the context's cancellation")
	}
	if err := g.Close(0, time.Minute); err != nil {
		t.Errorf("Close() = %v, want nil (they stopped on the interrupt)", err)
	}
	if strings.Count(out.String(), "interrupted") != 2 {
		t.Errorf("output:\n%s\nwant both interrupted", out.String())
	}
}

// waitOutput waits until text appears n times in out.
func waitOutput(t *testing.T, out *syncBuffer, text string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for strings.Count(out.String(), text) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %q %d times in a minute:\n%s", text, n, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
