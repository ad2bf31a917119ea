package e2e

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// startLoad starts "zkherd load" on server and returns once its window
// runs (a progress line with operations), with the command and its run id.
func startLoad(t *testing.T, bin, server string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"load", "--server", server, "--scenario", "fair-lock", "--clients", "5",
		"--session-timeout", "2s", "--no-tui", "--out", filepath.Join(t.TempDir(), "out")}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if l := sc.Text(); strings.Contains(l, "running") && !strings.Contains(l, "ops 0 ") {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd
		}
	}
	t.Fatalf("the run never ran")
	return nil
}

// runsOn lists the run namespaces under /zkherd/runs.
func runsOn(t *testing.T, conn *zk.Conn) []string {
	t.Helper()
	runs, _, err := conn.Children("/zkherd/runs")
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	return runs
}

// TestDeadRunsNamespaceRemoved (issue 22, finding 3): a run killed
// (SIGKILL) leaves its namespace; once its session has expired, the next
// run removes it and says so, and "zkherd load --cleanup" does it on its
// own. A live run's namespace is left alone.
func TestDeadRunsNamespaceRemoved(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	server := ens.ConnectString()
	conn, _, err := zk.Connect(ens.Servers(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	killed := func() string {
		t.Helper()
		before := runsOn(t, conn)
		cmd := startLoad(t, bin, server, "--duration", "2m")
		var runs []string
		for _, r := range runsOn(t, conn) {
			if !slices.Contains(before, r) {
				runs = append(runs, r)
			}
		}
		if len(runs) != 1 {
			t.Fatalf("new runs under /zkherd/runs: %v, want the one running", runs)
		}
		all := append(before, runs[0])
		slices.Sort(all)
		if err := cmd.Process.Signal(os.Kill); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		// Its owner mark goes when its session expires (2 s).
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			ok, _, err := conn.Exists("/zkherd/runs/" + runs[0] + "/owner")
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the killed run's owner mark is still there after 30 s")
			}
		}
		if got := runsOn(t, conn); !slices.Equal(slices.Sorted(slices.Values(got)), all) {
			t.Fatalf("runs after the kill: %v, want %v (the killed one left behind)", got, all)
		}
		return runs[0]
	}

	// The next run removes what the dead one left, and says so.
	dead := killed()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "load", "--server", server, "--scenario", "fair-lock", "--clients", "2",
		"--duration", "1s", "--no-tui", "--out", filepath.Join(t.TempDir(), "next")).CombinedOutput()
	if err != nil {
		t.Fatalf("next run: %v\n%s", err, out)
	}
	if want := "removed 1 namespace left by runs whose owners are gone: " + dead; !strings.Contains(string(out), want) {
		t.Errorf("next run's output lacks %q:\n%s", want, out)
	}
	if got := runsOn(t, conn); len(got) != 0 {
		t.Errorf("runs after the next run: %v, want none", got)
	}

	// --cleanup on its own; a live run is spared.
	live := startLoad(t, bin, server, "--duration", "1m")
	dead = killed()
	out, err = exec.CommandContext(ctx, bin, "load", "--cleanup", "--server", server).CombinedOutput()
	if err != nil {
		t.Fatalf("--cleanup: %v\n%s", err, out)
	}
	if want := "removed 1 namespace(s) under /zkherd/runs left by runs whose owners are gone: " + dead; !strings.Contains(string(out), want) {
		t.Errorf("--cleanup output lacks %q:\n%s", want, out)
	}
	if got := runsOn(t, conn); len(got) != 1 || got[0] == dead {
		t.Errorf("runs after --cleanup: %v, want the live run's only", got)
	}
	live.Process.Signal(os.Interrupt)
	live.Wait()
	if got := runsOn(t, conn); len(got) != 0 {
		t.Errorf("runs after the live run ended: %v, want none", got)
	}
}
