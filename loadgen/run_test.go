package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/scenarios"
)

func TestSmokeFairLock(t *testing.T) {
	ens := enstest.Start(t, 1)
	spec, ok := scenarios.Builtin("fair-lock")
	if !ok {
		t.Fatal("no fair-lock")
	}
	spec.Clients = 20
	spec.Duration = 2 * time.Second
	run := spec.Runs()[0]
	res, err := Run(context.Background(), run, Options{Servers: ens.Servers(), Logf: t.Logf, Progress: func(p Progress) {
		t.Logf("%s %v ops=%d rate=%.0f p99=%.2fms alive=%d", p.State, p.Elapsed.Round(time.Millisecond), p.Ops, p.Rate, p.Main.P99, p.SessionsAlive)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ops=%d tput=%.1f herd=%+v checks=%+v req=%v", res.Ops, res.Throughput, res.Herd, res.Checks, res.Requests)
	for _, p := range res.Metrics.Phases {
		s := res.Metrics.Summary(p)
		t.Logf("%-16s n=%d p50=%.3f p99=%.3f max=%.3f", p, s.Count, s.P50, s.P99, s.Max)
	}
}
