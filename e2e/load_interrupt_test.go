package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/internal/exit"
)

// TestLoadInterrupt is Ctrl-C in the middle of "zkherd load": the first
// interrupt stops the run, writes a report marked partial, exits 130, and
// leaves no znode of the run behind.
func TestLoadInterrupt(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	out := filepath.Join(t.TempDir(), "report")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "load", "--server", ens.ConnectString(), "--scenario", "fair-lock",
		"--clients", "50", "--duration", "2m", "--no-tui", "--out", out)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	// Wait until the run is under way (operations counted), then Ctrl-C.
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		if strings.Contains(line, "running") && !strings.Contains(line, "ops 0 ") {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("interrupt: %v", err)
	}
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exit.Interrupted {
		t.Fatalf("exit: %v, want code %d\nstderr:\n%s", err, exit.Interrupted, strings.Join(seen, "\n"))
	}

	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatalf("no report after the interrupt: %v", err)
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
	if !rep.Partial {
		t.Errorf("report.json partial = false, want true")
	}
	if len(rep.Scenarios) != 1 || rep.Scenarios[0].Operations == 0 {
		t.Errorf("report.json scenarios = %+v, want one with the operations done before the interrupt", rep.Scenarios)
	}

	conn, _, err := zk.Connect(ens.Servers(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	runs, _, err := conn.Children("/zkherd/runs")
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("list /zkherd/runs: %v", err)
	}
	if len(runs) != 0 {
		t.Errorf("znodes left under /zkherd/runs after the interrupt: %v", runs)
	}
}
