package common

import (
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/format"
)

// The dashboard and the reports write a latency the same way: one rule,
// package format's.
func TestDurationIsFormatsRule(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{812 * time.Microsecond, "812us"},
		{1234 * time.Microsecond, "1.23ms"},
		{45600 * time.Microsecond, "45.6ms"},
		{456 * time.Millisecond, "456ms"},
		{4560 * time.Millisecond, "4.56s"},
		{45600 * time.Millisecond, "45.6s"},
		{192 * time.Second, "3m12s"},
		{5*time.Hour + 2*time.Minute, "5h02m"},
	} {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
		ms := float64(tt.d) / float64(time.Millisecond)
		if got := format.Ms(ms); got != tt.want {
			t.Errorf("format.Ms(%v) = %q, want %q (the dashboard's rule)", ms, got, tt.want)
		}
	}
}
