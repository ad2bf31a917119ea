package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/internal/procstat"
)

// TestLostTerminalKeepsReport (issue 22, finding 5): the terminal of a
// dashboard run goes away (tmux killed, as an SSH drop does it: SIGHUP,
// then every write to the terminal fails), during the run or after it
// finished but before q. Either way report.json and report.html are
// written; the first is partial, the second not.
func TestLostTerminalKeepsReport(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	for _, tt := range []struct {
		name    string
		ready   string // on the screen before the terminal goes
		partial bool
	}{
		{"during the run", "running", true},
		{"finished, before q", "finished", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			command := fmt.Sprintf("%s load --server %s --scenario fair-lock --clients 5 --duration 6s --out %s", bin, ens.ConnectString(), out)
			term := newTmuxScreen(t, 120, 40, command)
			p := term.pid()
			if p == 0 {
				t.Fatal("tmux does not say the dashboard's process id")
			}
			term.wait(90*time.Second, tt.ready, "acquire")
			// The terminal goes: the pane's process gets SIGHUP, its
			// terminal is gone.
			term.close()
			// zkherd stops gracefully and exits; wait for its process.
			for deadline := time.Now().Add(60 * time.Second); processExists(p); time.Sleep(200 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("zkherd (pid %d) still runs 60 s after its terminal went", p)
				}
			}
			data, err := os.ReadFile(filepath.Join(out, "report.json"))
			if err != nil {
				t.Fatalf("no report.json after the terminal went: %v", err)
			}
			var rep struct {
				Partial   bool `json:"partial"`
				Scenarios []struct {
					Operations int64 `json:"operations"`
				} `json:"scenarios"`
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatalf("report.json: %v", err)
			}
			if rep.Partial != tt.partial || len(rep.Scenarios) != 1 || rep.Scenarios[0].Operations == 0 {
				t.Errorf("report.json: partial %v, scenarios %+v; want partial %v and the run's operations", rep.Partial, rep.Scenarios, tt.partial)
			}
			if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
				t.Errorf("no report.html: %v", err)
			}
		})
	}
}

// processExists reports whether process pid is still there (not reaped
// counts as there: tmux's server, its parent, has been killed, so init
// reaps it).
func processExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	state, _, err := procstat.State(pid)
	return err == nil && state != "Z"
}
