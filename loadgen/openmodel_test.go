package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// The wrk2 check: at 100 operations per second in an open model, a server
// stalled for 2 s (its JVM SIGSTOPped) delays every operation meant to
// start during the stall, and their latency, measured from the intended
// start, says so: the p99 is near 2 s, not the few milliseconds the calls
// take once the server answers again. Measured from the call (service
// time), most of those operations look fast.
func TestOpenModelLatencyIncludesStall(t *testing.T) {
	ens := enstest.Start(t, 1)
	spec := scenarios.Spec{
		Name:     "wrk2-stall",
		Recipe:   scenarios.FairLock,
		Clients:  20,
		Locks:    20, // one lock each: no contention, only the server's pace
		Duration: 6 * time.Second,
		Arrival:  scenarios.Arrival{Kind: scenarios.Constant, Rate: 100},
		Hold:     scenarios.FixedHold(time.Millisecond),
		RampUp:   1000,
		Faults:   []scenarios.Fault{{At: 2 * time.Second, Kind: scenarios.PauseMember, Member: 1, Duration: 2 * time.Second}},
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), spec.Runs()[0], Options{Servers: ens.Servers(), Ensemble: ens})
	if err != nil {
		t.Fatal(err)
	}
	if res.Faults == nil || res.Faults.Pauses != 1 {
		t.Fatalf("faults: got %+v, want one pause", res.Faults)
	}
	s := res.Metrics.Summary(metrics.Acquire)
	t.Logf("acquire from intended start: p50 %.1fms p90 %.1fms p99 %.1fms max %.1fms; service: p50 %.1fms p90 %.1fms p99 %.1fms; %d ops",
		s.CorrectedP50, s.CorrectedP90, s.CorrectedP99, s.CorrectedMax, s.P50, s.P90, s.P99, s.Count)
	t.Logf("errors %v, notes %q, warnings %q, window %v, faults %+v", res.Metrics.Counts.ErrorsByKind, res.Notes, res.Checks.Warnings,
		res.Stop.Sub(res.WindowStart), res.Events)
	if !s.HasCorrection {
		t.Fatal("acquire has no latency from the intended start")
	}
	if s.CorrectedP99 < 1500 || s.CorrectedP99 > 4000 {
		t.Errorf("p99 from the intended start: got %.1fms, want near 2s (1.5s-4s)", s.CorrectedP99)
	}
	// About a third of the operations were due during the stall; from the
	// call, only the 20 in flight when it began waited for it.
	if s.CorrectedP90 < 500 {
		t.Errorf("p90 from the intended start: got %.1fms, want above 500ms (a third of the operations were due during the stall)", s.CorrectedP90)
	}
	if s.P90 >= s.CorrectedP90/2 {
		t.Errorf("service p90 %.1fms: want well below the p90 from the intended start (%.1fms)", s.P90, s.CorrectedP90)
	}
	if res.TargetRate != 100 {
		t.Errorf("target rate: got %v, want 100", res.TargetRate)
	}
}
