package loadgen

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/scenarios"
)

// TestSessionsOpenedPerSecond: "sessions opened/s" is the window's
// sessions over the window's length. A stampede opens every session
// before the window: none is the window's, whatever the ramp-up did (it
// read 52.6/s in both demo runs: 1,000 ramp-up sessions over the ramp-up
// and the window). Expiries re-open sessions in the window: each counts.
func TestSessionsOpenedPerSecond(t *testing.T) {
	ens := enstest.Start(t, 1)
	const d = 6 * time.Second
	tests := []struct {
		name    string
		run     func() scenarios.Run
		opened  func(n int64, res *Result) bool
		explain string
	}{
		{"stampede, no fault", func() scenarios.Run {
			run := shortRun(t, "herd-lock", 6, d)
			run.Arrival = scenarios.Arrival{Kind: scenarios.Stampede}
			return run
		}, func(n int64, _ *Result) bool { return n == 0 }, "none: every session opened before the window"},
		{"closed, expiries", func() scenarios.Run {
			run := shortRun(t, "fair-lock", 4, d)
			run.SessionTimeout = 8 * time.Second // a loaded machine: no loss of the server in a slow second
			run.Faults = []scenarios.Fault{{Every: time.Second, Kind: scenarios.ExpireHolder}}
			return run
		}, func(n int64, res *Result) bool {
			return n >= 1 && res.Faults != nil && n <= int64(res.Faults.SessionsExpired)
		},
			"at least one, at most one per expiry: holders' sessions expired and re-opened"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := Run(ctx, tt.run(), Options{Servers: ens.Servers()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			n, window := res.Totals[figures.SessionsOpened], res.Totals[figures.WindowMs]
			if !tt.opened(n, res) {
				t.Errorf("sessions opened in the window = %d, want %s", n, tt.explain)
			}
			// The window is the run's duration, give or take the
			// servers' last reading; not the ramp-up and the window.
			if window < (d-500*time.Millisecond).Milliseconds() || window > (d+10*time.Second).Milliseconds() {
				t.Errorf("window = %d ms, want about %v", window, d)
			}
			f, _ := figures.Lookup("sessions_opened_per_s")
			got, ok := f.Value(res.Totals)
			if want := 1000 * float64(n) / float64(window); !ok || math.Abs(got-want) > 1e-9*max(1, want) {
				t.Errorf("sessions_opened_per_s = %v (known %v), want %v", got, ok, want)
			}
		})
	}
}
