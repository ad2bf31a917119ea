package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/metrics"
)

// TestRampApartFromWindow (issue 22, finding 1): a closed loop's clients
// work as their sessions open, but the window opens once every session is
// open; what they did meanwhile is the ramp-up's figure, not the
// window's. (The window had opened with the first session: at 10,000
// clients and 200 sessions/s it measured 50 s of ramp-up and reported 11
// acquisitions/s.)
func TestRampApartFromWindow(t *testing.T) {
	ens := enstest.Start(t, 1)
	run := shortRun(t, "fair-lock", 40, 3*time.Second)
	run.RampUp = 10 // 40 sessions: about 4 s
	res, err := Run(context.Background(), run, Options{Servers: ens.Servers(), Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Checks.Passed {
		t.Errorf("checks failed: %v %v", res.Checks.Violations, res.Checks.NotChecked)
	}
	if d := res.WindowStart.Sub(res.Start); d < 3500*time.Millisecond {
		t.Errorf("window opened %v after the first session, want after the ramp-up (about 4 s)", d)
	}
	if w := res.Stop.Sub(res.WindowStart); w < 2900*time.Millisecond || w > 4*time.Second {
		t.Errorf("window lasted %v, want its 3 s", w)
	}
	r := res.Ramp
	if r == nil {
		t.Fatal("no ramp-up figures")
	}
	if r.Sessions != 40 || r.Duration < 3500*time.Millisecond || r.Ops == 0 || r.Metrics == nil {
		t.Errorf("ramp-up: %d sessions in %v, %d operations, metrics %v; want 40 in about 4 s with the closed loops' operations", r.Sessions, r.Duration, r.Ops, r.Metrics != nil)
	}
	if got := res.Metrics.Summary(metrics.Acquire).Count; got != res.Ops {
		t.Errorf("window: %d acquire values for %d operations: the ramp-up's leaked in", got, res.Ops)
	}
	if r.Metrics != nil && r.Metrics.Summary(metrics.Acquire).Count != r.Ops {
		t.Errorf("ramp-up: %d acquire values for %d operations", r.Metrics.Summary(metrics.Acquire).Count, r.Ops)
	}
	if res.Drain <= 0 || res.Drain > run.SessionTimeout {
		t.Errorf("drain %v, want above 0 and within the session timeout", res.Drain)
	}
}
