package tuitest

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
)

var record = flag.Bool("record", false, "record the load runs the load goldens replay (needs ZooKeeper; takes a minute)")

// TestRecord records real load runs for the dashboard's goldens:
// herd-vs-fair with 200 clients and a queue run. Without -record it checks
// that the recordings replay.
func TestRecord(t *testing.T) {
	recordings := []struct {
		name, scenario string
		clients        int
		d              time.Duration
	}{
		{"herd_vs_fair", "herd-vs-fair", 200, 6 * time.Second},
		{"queue", "queue", 60, 6 * time.Second},
	}
	if !*record {
		for _, r := range recordings {
			if s := Recorded(t, r.name, 1); len(s.Scenarios) == 0 {
				t.Errorf("recording %s replays to no scenario", r.name)
			}
		}
		return
	}
	ens := enstest.Start(t, 1)
	for _, r := range recordings {
		spec, ok := scenarios.Builtin(r.scenario)
		if !ok {
			t.Fatalf("no scenario %s", r.scenario)
		}
		spec.Clients, spec.Duration, spec.Ops = r.clients, r.d, 0
		if spec.Queue != nil {
			q := *spec.Queue
			q.Producers, q.Consumers, q.Items = r.clients/2, r.clients-r.clients/2, 0
			spec.Queue = &q
		}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		rec := Recording{Title: spec.Name, Runs: spec.Runs(), Start: time.Now()}
		var (
			mu    sync.Mutex
			steps []Step
		)
		for i, run := range rec.Runs {
			steps = append(steps, Step{At: time.Now(), Starting: i + 1})
			_, err := loadgen.Run(context.Background(), run, loadgen.Options{
				Servers: ens.Servers(), ProgressPhases: true,
				Progress: func(p loadgen.Progress) {
					mu.Lock()
					defer mu.Unlock()
					steps = append(steps, Step{At: time.Now(), Progress: &p})
				},
			})
			if err != nil {
				t.Fatalf("%s: %v", run.Name, err)
			}
		}
		out, err := os.Create(filepath.Join("testdata", r.name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(out)
		if err := enc.Encode(rec); err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
