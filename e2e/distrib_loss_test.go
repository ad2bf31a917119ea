package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
)

// waitFor polls cond every 50 ms until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) bool {
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// pidOf reads the pid of process index of run id from its member node.
func pidOf(t *testing.T, s *recipes.Session, id string, index int) int {
	t.Helper()
	dir := loadgen.Root + "/" + id + "/members"
	children, _, err := s.Conn().Children(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		data, _, err := s.Conn().Get(dir + "/" + c)
		if err != nil {
			continue
		}
		var mi struct{ Index, PID int }
		if json.Unmarshal(data, &mi) == nil && mi.Index == index {
			return mi.PID
		}
	}
	t.Fatalf("no process %d in run %s", index, id)
	return 0
}

// TestJoinerKilledMidRun is a joined process killed with SIGKILL in the
// middle of a run: the starter names it, keeps its clients' figures up to
// its last live part, waits for its ephemeral nodes to expire, and says
// the run is incomplete (not PASS); nothing is left on the servers.
func TestJoinerKilledMidRun(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	server := ens.Servers()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := fmt.Sprintf("killed-%d", os.Getpid())
	out := filepath.Join(t.TempDir(), "report")
	common := []string{"--server", server, "--no-tui", "--session-timeout", "2s"}
	starter, starterOut := startZkherd(t, ctx, bin, append([]string{"load", "--scenario", "fair-lock", "--clients", "3", "--duration", "8s",
		"--processes", "3", "--run-id", id, "--out", out}, common...)...)
	if !waitFor(ctx, func() bool { ok, _, _ := s.Conn().Exists(loadgen.Root + "/" + id); return ok }) {
		t.Fatalf("the run never appeared:\n%s", starterOut)
	}
	var joiners []*exec.Cmd
	for range 2 {
		j, _ := startZkherd(t, ctx, bin, append([]string{"load", "--join", id}, common...)...)
		joiners = append(joiners, j)
	}
	// Process 2 has published a live part: kill it.
	live := loadgen.Root + "/" + id + "/steps/0/live/p-002"
	if !waitFor(ctx, func() bool { ok, _, _ := s.Conn().Exists(live); return ok }) {
		t.Fatalf("process 2 never published a live part:\n%s", starterOut)
	}
	pid := pidOf(t, s, id, 2)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = starter.Wait()
	for _, j := range joiners {
		j.Wait()
	}
	if err == nil {
		t.Errorf("the starter exited 0; want a run that is not PASS\n%s", starterOut)
	}
	text := starterOut.String()
	if !strings.Contains(text, "RESULT: UNKNOWN") && !strings.Contains(text, "RESULT: FAIL") {
		t.Errorf("summary:\n%s\nwant a verdict that is not PASS", text)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatalf("no report: %v\n%s", err, text)
	}
	var rep struct {
		Scenarios []struct {
			Clients    int64 `json:"clients"`
			Operations int64 `json:"operations"`
			Partial    bool  `json:"partial"`
			Checks     struct {
				Passed         bool     `json:"passed"`
				NotChecked     []string `json:"not_checked"`
				LeftoverZnodes int64    `json:"leftover_znodes"`
			} `json:"checks"`
			Notes []string `json:"notes"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	sc := rep.Scenarios[0]
	named := "process 2 ("
	lostLine := ""
	for _, n := range sc.Checks.NotChecked {
		if strings.Contains(n, named) && strings.Contains(n, fmt.Sprintf("pid %d", pid)) && strings.Contains(n, "was lost") {
			lostLine = n
		}
	}
	if lostLine == "" || sc.Checks.Passed || !sc.Partial {
		t.Errorf("checks passed %v, partial %v, not checked %q; want process 2 (pid %d) named lost, the run partial and not passed", sc.Checks.Passed, sc.Partial, sc.Checks.NotChecked, pid)
	}
	if !strings.Contains(lostLine, "its last live part") || sc.Clients != 9 || sc.Operations == 0 {
		t.Errorf("lost line %q, %d clients, %d operations; want its live part's figures kept in 9 clients' operations", lostLine, sc.Clients, sc.Operations)
	}
	if sc.Checks.LeftoverZnodes != 0 {
		t.Errorf("%d leftover znodes: the killed process's ephemeral nodes never expired", sc.Checks.LeftoverZnodes)
	}
	if ok, _, _ := s.Conn().Exists("/zkherd"); ok {
		t.Errorf("/zkherd left behind")
	}
}

// TestStarterKilledJoinersStop is a starter killed with SIGKILL mid-run
// while the processes that joined it were started by hand (no parent to
// signal them): they see its session end, stop within the session
// timeout, and the last one out removes the run: nothing is left.
func TestStarterKilledJoinersStop(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	server := ens.Servers()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := fmt.Sprintf("orphan-%d", os.Getpid())
	common := []string{"--server", server, "--no-tui", "--session-timeout", "2s"}
	starter, starterOut := startZkherd(t, ctx, bin, append([]string{"load", "--scenario", "queue", "--clients", "4", "--rate", "50", "--duration", "2m",
		"--processes", "3", "--run-id", id, "--out", filepath.Join(t.TempDir(), "report")}, common...)...)
	if !waitFor(ctx, func() bool { ok, _, _ := s.Conn().Exists(loadgen.Root + "/" + id); return ok }) {
		t.Fatalf("the run never appeared:\n%s", starterOut)
	}
	var joiners []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		j, o := startZkherd(t, ctx, bin, append([]string{"load", "--join", id}, common...)...)
		joiners, outs = append(joiners, j), append(outs, o)
	}
	live := loadgen.Root + "/" + id + "/steps/0/live/p-002"
	if !waitFor(ctx, func() bool { ok, _, _ := s.Conn().Exists(live); return ok }) {
		t.Fatalf("the run never went:\n%s", starterOut)
	}
	if err := starter.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	starter.Wait()
	killed := time.Now()
	for i, j := range joiners {
		err := j.Wait()
		if err == nil || !strings.Contains(outs[i].String(), "is gone") {
			t.Errorf("joiner %d: %v\n%s\nwant it stopped, saying the starter is gone", i, err, outs[i])
		}
	}
	// Within the session timeout (2 s) and the joiners' stop, bounded
	// generously for a loaded machine.
	if d := time.Since(killed); d > time.Minute {
		t.Errorf("the joiners took %v to stop", d)
	}
	if !waitFor(ctx, func() bool { ok, _, _ := s.Conn().Exists("/zkherd"); return !ok }) {
		children, _, _ := s.Conn().Children(loadgen.Root)
		t.Errorf("/zkherd left behind: runs %v", children)
	}
}
