package scenarios

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestSampler(t *testing.T) {
	const n = 20_000
	tests := []struct {
		name     string
		dist     Distribution
		min, max time.Duration // every draw within
		mean     time.Duration // of the draws, within 5%
	}{
		{"default", Distribution{}, DefaultHold, DefaultHold, DefaultHold},
		{"fixed zero", FixedHold(0), 0, 0, 0},
		{"fixed", FixedHold(3 * ms), 3 * ms, 3 * ms, 3 * ms},
		{"uniform", Distribution{Kind: Uniform, Min: ms, Max: 5 * ms}, ms, 5 * ms, 3 * ms},
		{"uniform degenerate", Distribution{Kind: Uniform, Min: 2 * ms, Max: 2 * ms}, 2 * ms, 2 * ms, 2 * ms},
		{"exponential", Distribution{Kind: Exponential, Mean: 2 * ms}, 0, math.MaxInt64, 2 * ms},
		// Capping at the mean pulls the average down to (1-1/e) of the mean.
		{"exponential capped", Distribution{Kind: Exponential, Mean: 10 * ms, Max: 10 * ms}, 0, 10 * ms, 6321206 * time.Nanosecond}, // 10ms x (1-1/e)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSampler(tt.dist, 1, 0)
			var sum time.Duration
			for range n {
				d := s.Next()
				if d < tt.min || d > tt.max {
					t.Fatalf("Next() = %v, outside %v..%v", d, tt.min, tt.max)
				}
				sum += d
			}
			mean := sum / n
			if diff := math.Abs(float64(mean - tt.mean)); diff > 0.05*float64(tt.mean) {
				t.Errorf("mean of %d draws = %v, want %v", n, mean, tt.mean)
			}
		})
	}
}

func TestSamplerSeeds(t *testing.T) {
	d := Distribution{Kind: Uniform, Min: 0, Max: time.Second}
	draw := func(seed, stream uint64) []time.Duration {
		s := NewSampler(d, seed, stream)
		out := make([]time.Duration, 5)
		for i := range out {
			out[i] = s.Next()
		}
		return out
	}
	a, b := draw(1, 0), draw(1, 0)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("same seed and stream: %v and %v", a, b)
	}
	if c := draw(1, 1); fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("streams 0 and 1 drew the same %v", a)
	}
	if c := draw(2, 0); fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("seeds 1 and 2 drew the same %v", a)
	}
}
