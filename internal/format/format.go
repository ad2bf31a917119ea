// Package format is the one set of number formatters zkherd's outputs
// share: the terminal summary, the progress line and the dashboard.
package format

import (
	"fmt"
	"strconv"
	"time"
)

// Ms writes a latency in milliseconds by Duration's rule.
func Ms(ms float64) string {
	if ms < 0 {
		return "0"
	}
	return Duration(time.Duration(ms * float64(time.Millisecond)))
}

// Duration is zkherd's one rule for writing a time span, latency or age,
// in the terminal summary, the reports and the dashboard alike: a unit
// that keeps it short, three significant figures below a minute:
// 812us, 1.23ms, 45.6ms, 456ms, 4.56s, 45.6s, 3m12s, 5h02m; 0 is "0" and
// a negative span (unknown) "-".
func Duration(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d < 0:
		return "-"
	case d == 0:
		return "0"
	case ms < 1:
		return fmt.Sprintf("%.0fus", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1fms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.0fms", ms)
	case ms < 10_000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", ms/1000)
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Count writes n with thousands separators: 12,345.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	b := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return sign + string(b)
}
