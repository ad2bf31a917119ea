package format

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-12345, "-12,345"}} {
		if got := Count(tt.n); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestMs(t *testing.T) {
	for _, tt := range []struct {
		ms   float64
		want string
	}{{0, "0"}, {0.812, "812us"}, {1.234, "1.23ms"}, {45.6, "45.6ms"}, {456, "456ms"}, {4560, "4.56s"}, {45600, "45.6s"}, {750000, "12m30s"}} {
		if got := Ms(tt.ms); got != tt.want {
			t.Errorf("Ms(%v) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}
