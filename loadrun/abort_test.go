package loadrun

import (
	"testing"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// TestCrossedForGood: only figures that can only grow, under an upper
// bound, abort a run early; a percentile or a rate can still recover.
func TestCrossedForGood(t *testing.T) {
	pr := loadgen.Progress{State: "running", Errors: 1, MainPhase: metrics.Acquire,
		Main: metrics.Summary{Count: 10, P99: 9, Max: 10}}
	tests := []struct {
		expr string
		want bool
	}{
		{"errors<=0", true},
		{"errors<5", false},
		{"acquire.max<5ms", true},
		{"acquire.max<1s", false},
		{"acquire.p99<1ms", false},   // judged at the end
		{"throughput>1000", false},   // judged at the end
		{"error_rate<0.0001", false}, // judged at the end
		{"hold.max<1ms", false},      // not in this progress
	}
	for _, tt := range tests {
		th, err := scenarios.ParseThreshold(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := crossedForGood(th, pr); got != tt.want {
			t.Errorf("crossedForGood(%s) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}
