package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/figures"
)

// TestTLSRunReadsItsPackets: over a TLS-only ensemble, the wire tap reads
// ZooKeeper's packets, not TLS records: the wake-ups are counted (a fair
// lock wakes one waiter per release) and the wait graph knows which node
// each waiter watches. The tap sat under the sessions' own TLS: wake-ups
// per release were 0 and the dashboard's chain had no nodes.
func TestTLSRunReadsItsPackets(t *testing.T) {
	ens := enstest.StartTLS(t, 1)
	files := ens.TLS()
	cfg, err := connstr.TLS{CA: files.CA, Cert: files.Cert, Key: files.Key}.Config()
	if err != nil {
		t.Fatal(err)
	}
	const clients = 10
	run := shortRun(t, "fair-lock", clients, 3*time.Second)
	var (
		mu      sync.Mutex
		watched int
	)
	res, err := Run(context.Background(), run, Options{
		Servers: ens.Servers(), TLS: cfg, Interval: 250 * time.Millisecond, ProgressPhases: true,
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.Lock == nil {
				return
			}
			n := 0
			for _, w := range p.Lock.Waiters {
				if w.Watching != "" {
					n++
				}
			}
			watched = max(watched, n)
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Ops == 0 {
		t.Fatalf("no operations over TLS")
	}
	if w := figures.Get(res.Totals, figures.WakeupsPerRelease); w < 0.5 || w > 1.5 {
		t.Errorf("wake-ups per release %.2f (%d wake-ups, %d releases), want about 1", w, res.Totals[figures.Wakeups], res.Totals[figures.Releases])
	}
	mu.Lock()
	defer mu.Unlock()
	if watched < 3 {
		t.Errorf("at most %d waiters with the node they watch in the wait graph, want at least 3", watched)
	}
}
