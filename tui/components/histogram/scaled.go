package histogram

import (
	"math"
	"strings"
	"time"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/loadview"
)

// Scale is what histograms drawn side by side share, so that a glance
// compares them: the same latency rows (power-of-two buckets from Lo to
// Hi, Group of them per row) and the same bar length for the same share
// of a phase's values.
type Scale struct {
	Lo, Hi   time.Duration
	Group    int     // buckets per row
	MaxShare float64 // the largest share of any row of any histogram
}

// ScaleOf fits the given phases' buckets into at most rows rows.
func ScaleOf(rows int, phases ...loadview.Phase) Scale {
	var sc Scale
	for _, p := range phases {
		for _, b := range p.Buckets {
			if b.Count == 0 {
				continue
			}
			if sc.Lo == 0 || b.UpTo < sc.Lo {
				sc.Lo = b.UpTo
			}
			sc.Hi = max(sc.Hi, b.UpTo)
		}
	}
	if sc.Lo == 0 || rows <= 0 {
		return Scale{}
	}
	n := buckets(sc.Lo, sc.Hi)
	sc.Group = (n + rows - 1) / rows
	for _, p := range phases {
		for _, r := range sc.rows(p) {
			sc.MaxShare = math.Max(sc.MaxShare, r.share)
		}
	}
	return sc
}

// buckets counts the power-of-two buckets from lo to hi.
func buckets(lo, hi time.Duration) int {
	n := 1
	for up := lo; up < hi && n < 64; up *= 2 {
		n++
	}
	return n
}

type row struct {
	upTo  time.Duration
	count int64
	share float64
}

// rows groups p's buckets on the scale's rows.
func (sc Scale) rows(p loadview.Phase) []row {
	if sc.Group <= 0 {
		return nil
	}
	n := buckets(sc.Lo, sc.Hi)
	out := make([]row, (n+sc.Group-1)/sc.Group)
	up := sc.Lo
	for i := 0; i < n; i++ {
		out[i/sc.Group].upTo = up
		up *= 2
	}
	var total int64
	for _, b := range p.Buckets {
		total += b.Count
		if b.UpTo < sc.Lo || b.UpTo > sc.Hi {
			continue
		}
		i := int(math.Round(math.Log2(float64(b.UpTo) / float64(sc.Lo))))
		out[min(i/sc.Group, len(out)-1)].count += b.Count
	}
	if total > 0 {
		for i := range out {
			out[i].share = float64(out[i].count) / float64(total)
		}
	}
	return out
}

// RenderScaled draws p on sc, one row per group of buckets:
// "≤131ms ████▌   4,155 p50", the rows holding the median and the 99th
// percentile marked. Every line is exactly width cells.
func RenderScaled(p loadview.Phase, sc Scale, width int) []string {
	rows := sc.rows(p)
	if len(rows) == 0 || p.Count == 0 {
		return []string{common.Fit("no samples yet", width)}
	}
	const labelW, countW, markW = 8, 6, 8 // "≤131ms", "12,345", " ◀p50,99"
	barW := width - labelW - countW - markW - 2
	out := make([]string, 0, len(rows))
	p50, p99 := false, false
	for _, r := range rows {
		mark := ""
		if !p50 && p.P50 > 0 && p.P50 <= r.upTo {
			mark, p50 = "p50", true
		}
		if !p99 && p.P99 > 0 && p.P99 <= r.upTo {
			if mark == "" {
				mark = "p99"
			} else {
				mark = "p50,99" // both in one row
			}
			p99 = true
		}
		var line strings.Builder
		line.WriteString(common.FitRight("≤"+common.Duration(r.upTo), labelW))
		line.WriteByte(' ')
		if barW > 0 {
			line.WriteString(bar(int64(math.Round(r.share*1e6)), int64(math.Round(sc.MaxShare*1e6)), barW))
			line.WriteByte(' ')
		}
		line.WriteString(common.FitRight(shortCount(r.count), countW))
		if mark != "" {
			line.WriteString(" ◀" + mark)
		}
		// The mark column stays blank otherwise: common.Fit pads.
		out = append(out, common.Fit(line.String(), width))
	}
	return out
}

func shortCount(n int64) string {
	switch {
	case n < 100000:
		return common.Count(n)
	case n < 10000000:
		return common.Count(n/1000) + "k"
	}
	return common.Count(n/1000000) + "M"
}
