package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"

	"github.com/zkherd/zkherd/internal/format"
)

// Latency histograms, as the dashboard draws them: power-of-two buckets,
// each bar the share of the phase's values, the buckets holding p50 and
// p99 named. Drawn side by side they share the bucket range and the height
// scale, so that a glance compares two scenarios.

// histScale is what histograms drawn together share.
type histScale struct {
	lo, hi   float64 // bucket bounds, ms
	maxShare float64
}

func histScaleOf(hs ...[]Bucket) histScale {
	var sc histScale
	for _, h := range hs {
		var total int64
		for _, b := range h {
			total += b.Count
		}
		for _, b := range h {
			if b.Count == 0 {
				continue
			}
			if sc.lo == 0 || b.UpToMs < sc.lo {
				sc.lo = b.UpToMs
			}
			sc.hi = math.Max(sc.hi, b.UpToMs)
			sc.maxShare = math.Max(sc.maxShare, float64(b.Count)/float64(total))
		}
	}
	return sc
}

// histogramSVG draws h on sc, p50 and p99 (ms) marked.
func histogramSVG(id int, title, color string, h []Bucket, p50, p99 float64, sc histScale) template.HTML {
	if sc.lo <= 0 || len(h) == 0 {
		return ""
	}
	n := int(math.Round(math.Log2(sc.hi/sc.lo))) + 1
	var total int64
	counts := make([]int64, n)
	for _, b := range h {
		total += b.Count
		if i := int(math.Round(math.Log2(b.UpToMs / sc.lo))); i >= 0 && i < n {
			counts[i] += b.Count
		}
	}
	c := barChart{Title: title, YLabel: "share of values (%)", W: 460, H: 230, YMax: sc.maxShare * 100}
	up := sc.lo
	for i := range counts {
		share := 0.0
		if total > 0 {
			share = float64(counts[i]) / float64(total) * 100
		}
		text := ""
		switch {
		case p50 > 0 && p50 <= up && p50 > up/2 && p99 > 0 && p99 <= up && p99 > up/2:
			text = "p50 p99"
		case p50 > 0 && p50 <= up && p50 > up/2:
			text = "p50"
		case p99 > 0 && p99 <= up && p99 > up/2:
			text = "p99"
		}
		c.Bars = append(c.Bars, bar{Label: "≤" + format.Ms(up), Value: share, Text: text, Color: color})
		up *= 2
	}
	return c.svg(id)
}

// histograms draws every phase of s with values, on one scale per phase
// shared with others (the side-by-side view passes its scenarios).
func (b *builder) histograms(s *Scenario, color string) []template.HTML {
	names := make([]string, 0, len(s.Histogram))
	for p := range s.Histogram {
		names = append(names, p)
	}
	sort.Strings(names)
	if main := s.MainPhase(); s.Histogram[main] != nil {
		names = append([]string{main}, deleteString(names, main)...)
	}
	var out []template.HTML
	for _, p := range names {
		l := s.LatencyMs[p]
		out = append(out, histogramSVG(b.next(), fmt.Sprintf("%s: %s values", p, format.Count(l.Count)), color,
			s.Histogram[p], l.P50, l.P99, histScaleOf(s.Histogram[p])))
	}
	return out
}

// sideHistograms draws the main phase of each scenario on one shared scale.
func (b *builder) sideHistograms(ss []*Scenario) []template.HTML {
	main := ss[0].MainPhase()
	var hs [][]Bucket
	for _, s := range ss {
		hs = append(hs, s.Histogram[main])
	}
	sc := histScaleOf(hs...)
	var out []template.HTML
	for i, s := range ss {
		l := s.LatencyMs[main]
		if svg := histogramSVG(b.next(), fmt.Sprintf("%s: %s latency", s.Name, main), palette[i%len(palette)],
			s.Histogram[main], l.P50, l.P99, sc); svg != "" {
			out = append(out, svg)
		}
	}
	return out
}

func deleteString(xs []string, x string) []string {
	out := xs[:0:0]
	for _, s := range xs {
		if s != x {
			out = append(out, s)
		}
	}
	return out
}
