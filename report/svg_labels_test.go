package report

import (
	"regexp"
	"strings"
	"testing"
)

// TestBarLabelsReadable: a histogram with more buckets than its width
// labels fully labels every other (or every third...) bar instead of
// cutting each label to "≤1.~", which reads as nothing.
func TestBarLabelsReadable(t *testing.T) {
	labels := []string{"≤32.8us", "≤65.5us", "≤131us", "≤262us", "≤524us", "≤1.05ms", "≤2.10ms",
		"≤4.19ms", "≤8.39ms", "≤16.8ms", "≤33.6ms", "≤67.1ms", "≤134ms", "≤268ms"}
	c := barChart{Title: "hold: 760 values", W: 460, H: 230}
	for i, l := range labels {
		c.Bars = append(c.Bars, bar{Label: l, Value: float64(i + 1), Color: "#888"})
	}
	svg := string(c.svg(1))
	ticks := regexp.MustCompile(`<text class="tick"[^>]*text-anchor="middle">([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	full := 0
	for _, m := range ticks {
		if strings.HasSuffix(m[1], "~") {
			t.Errorf("bar label cut to %q", m[1])
		}
		for _, l := range labels {
			if m[1] == l {
				full++
			}
		}
	}
	if full < len(labels)/3 {
		t.Errorf("%d of %d bars labelled in full, want at least %d", full, len(labels), len(labels)/3)
	}
}
