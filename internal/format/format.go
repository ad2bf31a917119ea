// Package format is the one set of number formatters zkherd's outputs
// share: the terminal summary, the progress line and the dashboard.
package format

import (
	"fmt"
	"strconv"
)

// Ms writes a latency in milliseconds with a unit that keeps it short:
// 812us, 1.23ms, 45.6ms, 456ms, 4.56s, 45.6s, 12.5m.
func Ms(ms float64) string {
	switch {
	case ms <= 0:
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
	case ms < 60_000:
		return fmt.Sprintf("%.1fs", ms/1000)
	}
	return fmt.Sprintf("%.1fm", ms/60_000)
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
