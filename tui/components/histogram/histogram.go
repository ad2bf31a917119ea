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

// Render draws buckets as at most height rows of "≤ 2.05ms ████▌ 1,234",
// exactly width cells each. Empty buckets between the first and the last are
// drawn, so gaps show; when there are more buckets than rows, neighbours
// are merged.
func Render(buckets []loadview.Bucket, width, height int) []string {
	if height <= 0 || width <= 0 {
		return nil
	}
	bs := fill(buckets)
	if len(bs) == 0 {
		return []string{common.Fit("no samples yet", width)}
	}
	for len(bs) > height {
		bs = halve(bs)
	}
	var top int64
	for _, b := range bs {
		top = max(top, b.Count)
	}
	const labelW, countW = 8, 8
	barW := width - labelW - countW - 2
	rows := make([]string, 0, len(bs))
	for _, b := range bs {
		var line strings.Builder
		line.WriteString(common.FitRight("≤"+common.Duration(b.UpTo), labelW))
		line.WriteByte(' ')
		line.WriteString(bar(b.Count, top, barW))
		line.WriteByte(' ')
		line.WriteString(common.FitRight(common.Count(b.Count), countW))
		rows = append(rows, common.Fit(line.String(), width))
	}
	return rows
}

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

// fill adds the empty power-of-two buckets missing between the first and
// last bucket.
func fill(buckets []loadview.Bucket) []loadview.Bucket {
	if len(buckets) == 0 {
		return nil
	}
	out := make([]loadview.Bucket, 0, len(buckets))
	for i, b := range buckets {
		if i > 0 {
			prev := out[len(out)-1].UpTo
			for next := prev * 2; next < b.UpTo && next > prev && len(out) < 64; next *= 2 {
				out = append(out, loadview.Bucket{UpTo: next})
				prev = next
			}
		}
		out = append(out, b)
	}
	return out
}

// halve merges neighbouring buckets pairwise.
func halve(bs []loadview.Bucket) []loadview.Bucket {
	out := make([]loadview.Bucket, 0, (len(bs)+1)/2)
	for i := 0; i < len(bs); i += 2 {
		b := bs[i]
		if i+1 < len(bs) {
			b.UpTo = bs[i+1].UpTo
			b.Count += bs[i+1].Count
		}
		out = append(out, b)
	}
	return out
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
