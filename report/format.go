package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zkherd/zkherd/internal/format"
)

// fmtCount writes a count compactly for tables, at most 7 wide: 999,
// 123,456, 1.23M, 12.3M.
func fmtCount(n int64) string {
	if n >= 10_000_000 {
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	if n >= 1_000_000 {
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	}
	return format.Count(n)
}

// fmtNum writes v with the given decimals and thousands separators.
func fmtNum(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(whole, 10, 64)
	out := format.Count(n)
	if frac != "" {
		out += "." + frac
	}
	if v < 0 && strings.Trim(out, "0.,") != "" {
		out = "-" + out
	}
	return out
}

// fmtRatio writes b/a as a factor, "-" when it has no meaning.
func fmtRatio(a, b float64) string {
	if a <= 0 || b < 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	r := b / a
	switch {
	case r >= 100:
		return fmtNum(r, 0) + "x"
	case r >= 10:
		return fmt.Sprintf("%.1fx", r)
	case r >= 0.1:
		return fmt.Sprintf("%.2fx", r)
	case r == 0:
		return "0x"
	}
	return strconv.FormatFloat(r, 'g', 2, 64) + "x"
}

func passFail(passed bool) string {
	if passed {
		return "PASS"
	}
	return "FAIL"
}

// wrapItems joins items with " · " into lines no wider than width, the
// first starting with head and the others indented to head's width.
func wrapItems(head string, items []string, width int) string {
	if width <= 0 {
		return head + strings.Join(items, " · ") + "\n"
	}
	var b strings.Builder
	line := head
	indent := strings.Repeat(" ", len(head))
	for i, it := range items {
		sep := ""
		if i > 0 {
			sep = " · "
		}
		if i > 0 && len([]rune(line))+len([]rune(sep))+len([]rune(it)) > width {
			b.WriteString(line + "\n")
			line = indent + it
			continue
		}
		line += sep + it
	}
	b.WriteString(line + "\n")
	return b.String()
}
