package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
)

func TestLoadJoinThreeProcesses(t *testing.T) {
	inLane(t, commandLane)
	ens := enstest.Start(t, 1)
	server := ens.Servers()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := filepath.Join(t.TempDir(), "report")

	type res struct {
		stdout, stderr string
		err            error
	}
	results := make([]res, 3)
	bin := checkedBin(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		o, e, err := runZkherd(ctx, bin, "load", "--scenario", "fair-lock", "--clients", "5", "--duration", "2s",
			"--processes", "3", "--run-id", "cli1", "--server", server, "--no-tui", "--out", out)
		results[0] = res{o, e, err}
	}()
	// The joiners come once the run exists.
	for {
		ok, _, err := s.Conn().Exists(loadgen.Root + "/cli1")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the run never appeared")
		case <-time.After(20 * time.Millisecond):
		}
	}
	for i := 1; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, e, err := runZkherd(ctx, bin, "load", "--join", "cli1", "--server", server, "--no-tui")
			results[i] = res{o, e, err}
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("process %d: %v\nstdout:\n%s\nstderr:\n%s", i, r.err, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(results[0].stdout, "fair-lock, 3 processes") || !strings.Contains(results[0].stdout, "RESULT: PASS") {
		t.Errorf("starter's summary:\n%s\nwant the merged run, passed", results[0].stdout)
	}
	for i := 1; i < 3; i++ {
		if !strings.Contains(results[i].stdout, "results published") {
			t.Errorf("process %d said:\n%s\nwant its results published", i, results[i].stdout)
		}
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
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 1 || rep.Scenarios[0].Clients != 15 || rep.Scenarios[0].Operations == 0 || !rep.Scenarios[0].Checks.Passed {
		t.Errorf("report.json scenarios %+v, want one with 15 clients, operations, passed", rep.Scenarios)
	}
	if _, err := os.Stat(filepath.Join(out, "fair-lock-acquire.hgrm")); err != nil {
		t.Errorf("no merged acquire.hgrm: %v", err)
	}
	// Finished and removed: joining now is refused, and nothing is left.
	_, stderr, err := runZkherd(ctx, bin, "load", "--join", "cli1", "--server", server)
	if exitCode(err) != exit.Usage || !strings.Contains(stderr, "no such run: cli1") {
		t.Errorf("joining the finished run: %v (stderr %q), want exit 2 saying there is no such run", err, stderr)
	}
	if ok, _, _ := s.Conn().Exists("/zkherd"); ok {
		t.Errorf("/zkherd left behind")
	}
}
