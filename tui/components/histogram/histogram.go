// Package histogram draws latency distributions in text: a horizontal bar
// per power-of-two bucket, and a percentile line.
package histogram

import (
	"math"
	"strings"
	"time"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/loadview"
)

var eighths = []rune("▏▎▍▌▋▊▉█")

// bar is count/top of width cells, in eighths, padded to width.
func bar(count, top int64, width int) string {
	if width <= 0 {
		return ""
	}
	if top <= 0 || count <= 0 {
		return strings.Repeat(" ", width)
	}
	e := int(math.Round(float64(count) / float64(top) * float64(width*8)))
	e = max(e, 1)
	full, rest := e/8, e%8
	s := strings.Repeat("█", full)
	n := full
	if rest > 0 {
		s += string(eighths[rest-1])
		n++
	}
	return s + strings.Repeat(" ", width-n)
}

// Spectrum draws the percentile spectrum of p as one row per percentile
// (p50, p90, p99, p99.9, max), bars on a log scale from a tenth of the
// median to the maximum, so that a long tail shows as long bars below
// short ones: the plot to show when a phase carries percentiles but no
// buckets.
func Spectrum(p loadview.Phase, width, height int) []string {
	if height <= 0 || width <= 0 {
		return nil
	}
	if p.Count == 0 {
		return []string{common.Fit("no samples yet", width)}
	}
	rows := []struct {
		label string
		v     time.Duration
	}{{"p50", p.P50}, {"p90", p.P90}, {"p99", p.P99}, {"p99.9", p.P999}, {"max", p.Max}}
	if height < len(rows) {
		rows = append(rows[:height-1:height-1], rows[len(rows)-1])
	}
	const labelW, valueW = 6, 8
	barW := width - labelW - valueW - 2
	lo := math.Max(float64(p.P50)/10, float64(time.Microsecond))
	span := math.Log(math.Max(float64(p.Max), lo*1.0001) / lo)
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		frac := math.Log(math.Max(float64(r.v), lo)/lo) / span
		n := int(math.Round(frac * float64(barW*8)))
		line := common.Fit(r.label, labelW) + " " + bar(int64(n), int64(barW*8), barW) + " " + common.FitRight(common.Duration(r.v), valueW)
		out = append(out, common.Fit(line, width))
	}
	return out
}
