package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
)

// TestCoordServer runs a queue over three processes (--spawn 3) whose
// coordination goes to another ensemble (--coord-server): the plan,
// barriers and parts never touch the servers under test, the report
// says where the coordination went and what it cost, and neither
// ensemble keeps anything. A coordinator on a closed port is refused in
// one line that names --coord-server, leaving nothing behind.
func TestCoordServer(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	target, coord := enstest.Start(t, 1), enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sessionOn := func(servers []string) *recipes.Session {
		s, err := recipes.NewSession(ctx, servers)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	ts, cs := sessionOn(target.Servers()), sessionOn(coord.Servers())
	id := fmt.Sprintf("coord-%d", os.Getpid())
	out := filepath.Join(t.TempDir(), "report")
	cmd, text := startZkherd(t, ctx, bin, "load", "--scenario", "queue", "--clients", "4", "--duration", "3s",
		"--spawn", "3", "--run-id", id, "--server", target.ConnectString(), "--coord-server", coord.ConnectString(),
		"--no-tui", "--out", out)
	// While it runs: the run's members are on the coordinator only.
	members := loadgen.Root + "/" + id + "/members"
	if !waitFor(ctx, func() bool { ok, _, _ := cs.Conn().Exists(members); return ok }) {
		t.Fatalf("the run never appeared on the coordinator")
	}
	if ok, _, _ := ts.Conn().Exists(members); ok {
		t.Errorf("the run's members are on the servers under test")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zkherd load --coord-server: %v\n%s", err, text)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Scenarios []struct {
			Clients int      `json:"clients"`
			Notes   []string `json:"notes"`
			Checks  struct {
				Passed bool `json:"passed"`
			} `json:"checks"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	sc := rep.Scenarios[0]
	notes := strings.Join(sc.Notes, "\n")
	if !sc.Checks.Passed || sc.Clients != 12 || !strings.Contains(notes, coord.ConnectString()+" (--coord-server; no coordination request reaches the servers under test)") ||
		!strings.Contains(notes, "requests over the 3 processes") {
		t.Errorf("passed %v, %d clients, notes:\n%s\nwant 12 clients passed, the coordinator and its requests named", sc.Checks.Passed, sc.Clients, notes)
	}
	for name, s := range map[string]*recipes.Session{"servers under test": ts, "coordinator": cs} {
		if ok, _, _ := s.Conn().Exists("/zkherd"); ok {
			t.Errorf("/zkherd left on the %s", name)
		}
	}

	// A coordinator that cannot be reached.
	closed := freePort(t)
	var stderr strings.Builder
	bad := exec.CommandContext(ctx, bin, "load", "--scenario", "fair-lock", "--processes", "2", "--server", target.ConnectString(),
		"--coord-server", closed, "--no-tui", "--out", filepath.Join(t.TempDir(), "bad"))
	bad.Stderr = &stderr
	err = bad.Run()
	var ee *exec.ExitError
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--coord-server "+closed+": cannot connect") {
		t.Errorf("unreachable coordinator: %v, stderr:\n%s\nwant exit 2 and one line naming --coord-server", err, stderr.String())
	}
	if ok, _, _ := ts.Conn().Exists("/zkherd"); ok {
		t.Errorf("/zkherd left on the servers under test after the refusal")
	}
}
