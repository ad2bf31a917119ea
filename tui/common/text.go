package common

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/zkherd/zkherd/internal/format"
)

// Truncate cuts s (which may hold ANSI styles) to at most width cells,
// ending with "…" when cut.
func Truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// TruncateLeft keeps the last width cells of s, starting with "…" when cut:
// for paths, whose end matters most.
func TruncateLeft(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w <= width {
		return s
	}
	return "…" + ansi.TruncateLeft(s, w-width+1, "")
}

// Fit truncates or pads s to exactly width cells.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	s = Truncate(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// FitRight truncates s, or pads it on the left, to exactly width cells.
func FitRight(s string, width int) string {
	if width <= 0 {
		return ""
	}
	s = Truncate(s, width)
	if w := ansi.StringWidth(s); w < width {
		s = strings.Repeat(" ", width-w) + s
	}
	return s
}

// Lines fits text into a width x height block: every line cut or padded to
// width, and exactly height lines.
func Lines(text string, width, height int) string {
	if height <= 0 {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > height {
		lines = lines[:height]
	}
	for i, l := range lines {
		lines[i] = Fit(l, width)
	}
	for len(lines) < height {
		lines = append(lines, strings.Repeat(" ", max(width, 0)))
	}
	return strings.Join(lines, "\n")
}

// Duration formats d compactly for tables by zkherd's one rule (package
// format): 850us, 12.3ms, 4.21s, 3m12s, 5h02m.
func Duration(d time.Duration) string { return format.Duration(d) }

// Clock formats an elapsed time as m:ss or h:mm:ss.
func Clock(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Hour {
		return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// Count formats n with thousands separators: 12,345 (package format).
func Count(n int64) string { return format.Count(n) }

// Rate formats a per-second figure: 0.5, 12.3, 1,234.
func Rate(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return Count(int64(v + 0.5))
	}
}

// Bytes formats a size: 512 B, 1.5 KiB, 1.0 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Width is the number of cells s takes on screen (ANSI styles ignored).
func Width(s string) int { return ansi.StringWidth(s) }

// Plural is "1 child", "2 children": n with the singular or plural noun.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(int64(n)) + " " + many
}
