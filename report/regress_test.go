package report

import (
	"strings"
	"testing"
)

func TestRegressions(t *testing.T) {
	scen := func(tput, p99 float64, errs int64, passed bool) *Run {
		return &Run{Scenarios: []*Scenario{{
			Name: "fair", ThroughputPerS: tput, Operations: 1000, Errors: Errors{Total: errs},
			LatencyMs: map[string]Latency{"acquire": {Count: 1000, P50: 2, P99: p99}},
			Checks:    Checks{Passed: passed},
		}}}
	}
	base := scen(300, 10, 0, true)
	tests := []struct {
		name string
		b    *Run
		want []string
	}{
		{"same", scen(300, 10, 0, true), nil},
		{"within tolerance", scen(275, 10.9, 0, true), nil},
		{"slower", scen(300, 12, 0, true), []string{"acquire p99 10.0ms -> 12.0ms (20% worse)"}},
		{"less throughput", scen(200, 10, 0, true), []string{"throughput/s 300.0 -> 200.0 (33% worse)"}},
		{"errors appear", scen(300, 10, 5, true), []string{"error rate"}},
		{"checks fail", scen(300, 10, 0, false), []string{"checks PASS -> FAIL"}},
		{"faster is no regression", scen(600, 1, 0, true), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Regressions(base, tt.b, 0.10)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %d regression(s)", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("got %q, want it to contain %q", got[i], w)
				}
			}
		})
	}
}

func TestParseTolerance(t *testing.T) {
	for in, want := range map[string]float64{"10%": 0.1, "5": 0.05, " 0% ": 0} {
		if got, err := ParseTolerance(in); err != nil || got != want {
			t.Errorf("%q: got %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ten", "-5%"} {
		if _, err := ParseTolerance(bad); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}
