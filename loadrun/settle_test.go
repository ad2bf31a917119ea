package loadrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/internal/queuetest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// TestDistributedQueueSettlesLargeQueue (issue 23): a distributed queue
// run settles its items over every process with one listing of the queue
// by the coordination session. With go-zookeeper's 1 MiB default receive
// buffer, a queue of 24,000 items left (about 1.4 MB of names, as
// queue-chaos leaves) dropped that session's connection and lost items
// were "not checked". Here 24,000 items are added behind the run's own
// while it runs; the merged report must count them unconsumed. It
// failed before the run's sessions that settle a queue got the checkers'
// receive buffer (loadgen.CheckerRecvBuffer).
func TestDistributedQueueSettlesLargeQueue(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "out")
	// Each consumer works 30 s on its first item: none reaches the items
	// added behind the run's own.
	file := filepath.Join(t.TempDir(), "slow-queue.yaml")
	if err := os.WriteFile(file, []byte("name: slow-queue\nrecipe: queue\nclients: 2\nduration: 10s\nhold: 30s\nqueue:\n  producers: 1\n  consumers: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(file, scenarios.Overrides{}, out)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	r, _, stdout := runner(t, ens.Servers())
	events := r.Subscribe(ctx, 0)
	const extra = 24000
	added := make(chan error, 1)
	go func() {
		for ev := range events {
			if p, ok := ev.(EventProgress); ok && p.State == "running" {
				added <- queuetest.AddItems(admin.Conn(), loadgen.Root+"/bigq/steps/0/work/queue", extra)
				break
			}
		}
		for range events { // the subscription's owner closes it
		}
	}()
	if err := r.Start(ctx, plan, Distributed{Processes: 1, RunID: "bigq", JoinTimeout: time.Minute}); err != nil {
		t.Logf("Start: %v\n%s", err, stdout)
	}
	select {
	case err := <-added:
		if err != nil {
			t.Fatalf("add %d items: %v", extra, err)
		}
	default:
		t.Fatal("the run ended before it reported running: no items were added")
	}

	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatalf("no merged report: %v\n%s", err, stdout)
	}
	var rep struct {
		Scenarios []struct {
			CheckResults []struct {
				Key    string `json:"key"`
				Status string `json:"status"`
				Value  string `json:"value"`
			} `json:"check_results"`
			Notes []string `json:"notes"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Scenarios) != 1 {
		t.Fatalf("report.json: %v, %d scenarios", err, len(rep.Scenarios))
	}
	found := false
	for _, c := range rep.Scenarios[0].CheckResults {
		if c.Key == "lost_items" {
			found = true
			if c.Status != "pass" {
				t.Errorf("lost items: %s (%s), want pass", c.Status, c.Value)
			}
		}
	}
	if !found {
		t.Errorf("no lost items check in %+v", rep.Scenarios[0].CheckResults)
	}
	want := "item(s) were still queued when every process had stopped (removed)"
	counted := false
	for _, n := range rep.Scenarios[0].Notes {
		var k int
		if _, err := fmt.Sscanf(n, "%d item(s)", &k); err == nil && k >= extra && n[len(n)-len(want):] == want {
			counted = true
		}
	}
	if !counted {
		t.Errorf("notes %q: want the %d added items counted as still queued", rep.Scenarios[0].Notes, extra)
	}
	if runs, _, err := admin.Conn().Children(loadgen.Root); err == nil && len(runs) != 0 {
		t.Errorf("namespaces left on the servers: %v", runs)
	}
}
