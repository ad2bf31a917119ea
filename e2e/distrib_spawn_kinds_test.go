package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestSpawnKinds runs, as a user would, a barrier scenario and a
// scenario with faults (fair-lock-chaos on the local three-node ensemble
// the starter starts) with --spawn 3, and reads the merged report:
// every process's clients, every check passed, the history checked on
// one clock, each fault once and from the starter. (TestDistributedKinds
// in package distrib checks every kind's merge in detail.)
func TestSpawnKinds(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	for _, tc := range []struct {
		scenario string
		args     []string
		faults   bool
	}{
		{scenario: "barrier", args: []string{"--clients", "4", "--duration", "2s"}},
		{scenario: "chaos.yaml", args: []string{"--clients", "3"}, faults: true},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out := filepath.Join(t.TempDir(), "report")
			id := fmt.Sprintf("kinds-%s-%d", strings.TrimSuffix(tc.scenario, ".yaml"), os.Getpid())
			scenario := tc.scenario
			if tc.faults {
				// A scenario file: a member killed, holders expired and
				// cut, on the local ensemble the starter starts.
				scenario = filepath.Join(t.TempDir(), tc.scenario)
				if err := os.WriteFile(scenario, []byte(chaosFile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"load", "--scenario", scenario, "--spawn", "3", "--run-id", id, "--no-tui", "--out", out}, tc.args...)
			if !tc.faults {
				args = append(args, "--server", enstest.Start(t, 1).ConnectString())
			}
			cmd, text := startZkherd(t, ctx, bin, args...)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("zkherd %s: %v\n%s", strings.Join(args, " "), err, text)
			}
			data, err := os.ReadFile(filepath.Join(out, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Scenarios []struct {
					Clients    int   `json:"clients"`
					Operations int64 `json:"operations"`
					Checks     struct {
						Passed bool `json:"passed"`
					} `json:"checks"`
					Linearizability struct {
						Result string `json:"result"`
						Scope  string `json:"scope"`
					} `json:"linearizability"`
					Events []struct {
						Kind   string `json:"kind"`
						Detail string `json:"detail"`
					} `json:"events"`
				} `json:"scenarios"`
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			s := rep.Scenarios[0]
			if !s.Checks.Passed || s.Operations == 0 || s.Clients != 3*clientsOf(tc.args) {
				t.Errorf("passed %v, %d operations, %d clients; want every process's clients, operations, passed\n%s", s.Checks.Passed, s.Operations, s.Clients, text)
			}
			if l := s.Linearizability; l.Result != "ok" || !strings.HasPrefix(l.Scope, "every process's operations on one clock (3 processes") {
				t.Errorf("linearizability %+v, want ok on one clock", l)
			}
			faults := 0
			for _, e := range s.Events {
				if e.Kind == "fault" {
					faults++
					if !strings.HasPrefix(e.Detail, "process 0: ") {
						t.Errorf("fault %q not from the starter", e.Detail)
					}
				}
			}
			if tc.faults && faults == 0 {
				t.Errorf("no fault in the merged timeline\n%s", text)
			}
		})
	}
}

const chaosFile = `name: chaos
recipe: fair-lock
ensemble: 3
clients: 3
duration: 4s
arrival: closed
hold: 5ms
session_timeout: 4s
faults:
  - at: 1s
    kind: kill-member
    duration: 1s
  - every: 1s
    kind: expire-holder
  - every: 1s
    kind: cut-connections
    on: create
`

// clientsOf reads --clients from args.
func clientsOf(args []string) int {
	for i, a := range args {
		if a == "--clients" && i+1 < len(args) {
			var n int
			fmt.Sscan(args[i+1], &n)
			return n
		}
	}
	return 0
}
