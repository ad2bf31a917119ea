package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadSweepChaos is issue 11's "zkherd load --scenario fair-lock-chaos
// --sweep 20,40 --duration 20s works": the sweep runs on the local ensemble
// it starts, so the scenario's server faults (kill-leader, pause-member)
// act on it. It used to fail: the sweep never gave the run its ensemble.
func TestLoadSweepChaos(t *testing.T) {
	inLane(t, commandLane)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := runZkherd(ctx, checkedBin(t), "load", "--scenario", "fair-lock-chaos", "--sweep", "20,40", "--duration", "20s",
		"--no-tui", "--out", out)
	if err != nil {
		t.Fatalf("zkherd load: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		LocalEnsemble bool `json:"local_ensemble"`
		Scenarios     []struct {
			Name   string `json:"name"`
			Faults *struct {
				LeaderKills int64 `json:"leader_kills"`
			} `json:"faults"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range rep.Scenarios {
		names = append(names, s.Name)
		if s.Faults == nil || s.Faults.LeaderKills == 0 {
			t.Errorf("%s: faults %+v, want the leader killed", s.Name, s.Faults)
		}
	}
	if got := strings.Join(names, " "); got != "fair-lock-chaos@20 fair-lock-chaos@40" || !rep.LocalEnsemble {
		t.Errorf("report: scenarios %q, local ensemble %v; want fair-lock-chaos@20 fair-lock-chaos@40 on a local ensemble", got, rep.LocalEnsemble)
	}
}
