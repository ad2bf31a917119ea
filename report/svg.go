package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
)

// The plots are SVG written here and inlined into report.html: no script,
// no external file. Every plot is a well-formed XML element.

var palette = []string{
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#1f77b4", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f",
}

type xy struct{ X, Y float64 }

type series struct {
	Name  string
	Color string
	Dash  bool
	Pts   []xy
}

type marker struct {
	X     float64
	Label string
	Color string
}

// axisKind says how an axis maps values to positions.
type axisKind int

const (
	linear axisKind = iota
	logarithmic
	// percentile maps p (0-100) to log10(1/(1-p/100)), the way HdrHistogram
	// plots percentile spectra.
	percentile
)

type axis struct {
	Kind  axisKind
	Label string
	// Format writes a tick value.
	Format func(float64) string
	// Min and Max, when set, fix the range (in values, not positions).
	Min, Max *float64
}

type linePlot struct {
	Title    string
	X, Y     axis
	Series   []series
	Markers  []marker
	W, H     int
	NoLegend bool
}

const (
	padLeft   = 72
	padTop    = 16
	padBottom = 46
	legendW   = 170
)

// maxPercentileX caps the percentile axis at 99.9999%.
const maxPercentileX = 6

func (k axisKind) pos(v float64) float64 {
	switch k {
	case logarithmic:
		return math.Log10(v)
	case percentile:
		if v >= 100 {
			return maxPercentileX
		}
		return math.Min(math.Log10(100/(100-v)), maxPercentileX)
	}
	return v
}

type tick struct {
	V     float64 // in position units
	Label string
}

// scale maps positions in [lo, hi] to pixels in [p0, p1].
type scale struct{ lo, hi, p0, p1 float64 }

func (s scale) px(pos float64) float64 {
	if s.hi == s.lo {
		return (s.p0 + s.p1) / 2
	}
	return s.p0 + (pos-s.lo)/(s.hi-s.lo)*(s.p1-s.p0)
}

// rangeOf returns the range of positions the axis shows and its ticks.
func (a axis) rangeOf(values []float64) (lo, hi float64, ticks []tick) {
	format := a.Format
	if format == nil {
		format = func(v float64) string { return fmtNum(v, 0) }
	}
	vmin, vmax := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if a.Kind == logarithmic && v <= 0 {
			continue
		}
		vmin, vmax = math.Min(vmin, v), math.Max(vmax, v)
	}
	if a.Min != nil {
		vmin = *a.Min
	}
	if a.Max != nil {
		vmax = *a.Max
	}
	switch a.Kind {
	case percentile:
		hi = math.Max(2, math.Ceil(a.Kind.pos(math.Max(vmax, 0))-1e-9))
		hi = math.Min(hi, maxPercentileX)
		for d := 0.0; d <= hi; d++ {
			ticks = append(ticks, tick{V: d, Label: percentileLabel(d)})
		}
		return 0, hi, ticks
	case logarithmic:
		if math.IsInf(vmin, 0) {
			vmin, vmax = 1, 10
		}
		lo = math.Floor(math.Log10(vmin) + 1e-9)
		hi = math.Ceil(math.Log10(vmax) - 1e-9)
		if hi <= lo {
			hi = lo + 1
		}
		for d := lo; d <= hi; d++ {
			ticks = append(ticks, tick{V: d, Label: format(math.Pow(10, d))})
			if hi-lo <= 2 && d < hi {
				for _, m := range []float64{2, 5} {
					ticks = append(ticks, tick{V: d + math.Log10(m), Label: format(m * math.Pow(10, d))})
				}
			}
		}
		return lo, hi, ticks
	}
	if math.IsInf(vmin, 0) {
		vmin, vmax = 0, 1
	}
	vmin = math.Min(vmin, 0)
	if vmax <= vmin {
		vmax = vmin + 1
	}
	step := niceStep((vmax - vmin) / 5)
	lo = math.Floor(vmin/step) * step
	hi = math.Ceil(vmax/step-1e-9) * step
	if a.Max != nil {
		hi = vmax // a fixed end (a window's, a shared scale's) is where the axis ends
	}
	for v := lo; v <= hi+step/2 && (a.Max == nil || v <= hi+1e-9); v += step {
		ticks = append(ticks, tick{V: v, Label: format(v)})
	}
	return lo, hi, ticks
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func percentileLabel(d float64) string {
	switch d {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", int(d)-2) + "%"
}

func (p linePlot) svg(id int) template.HTML {
	w, h := p.W, p.H
	if w == 0 {
		w = 1000
	}
	if h == 0 {
		h = 320
	}
	right := legendW
	if p.NoLegend {
		right = 24
	}
	var xs, ys []float64
	for _, s := range p.Series {
		for _, pt := range s.Pts {
			xs = append(xs, pt.X)
			ys = append(ys, pt.Y)
		}
	}
	for _, m := range p.Markers {
		xs = append(xs, m.X)
	}
	xlo, xhi, xticks := p.X.rangeOf(xs)
	ylo, yhi, yticks := p.Y.rangeOf(ys)
	sx := scale{xlo, xhi, padLeft, float64(w - right)}
	sy := scale{ylo, yhi, float64(h - padBottom), padTop}

	b := svgBuilder{id: id}
	b.open(w, h, p.Title)
	// Grid and ticks.
	for _, t := range yticks {
		y := sy.px(t.V)
		b.line(padLeft, y, float64(w-right), y, "grid")
		b.text(padLeft-6, y+4, "end", "tick", t.Label)
	}
	for _, t := range xticks {
		x := sx.px(t.V)
		b.line(x, padTop, x, float64(h-padBottom), "grid")
		b.text(x, float64(h-padBottom)+16, "middle", "tick", t.Label)
	}
	b.rect(padLeft, padTop, float64(w-right-padLeft), float64(h-padBottom-padTop), "frame")
	b.text(float64(padLeft+w-right)/2, float64(h)-6, "middle", "label", p.X.Label)
	b.raw(fmt.Sprintf(`<text class="label" text-anchor="middle" transform="translate(16 %.1f) rotate(-90)">%s</text>`,
		float64(padTop+h-padBottom)/2, esc(p.Y.Label)))

	// Markers behind the data.
	for i, m := range p.Markers {
		x := sx.px(p.X.Kind.pos(m.X))
		if x < padLeft || x > float64(w-right) {
			continue
		}
		color := m.Color
		if color == "" {
			color = "#c0392b"
		}
		b.raw(fmt.Sprintf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.5" stroke-dasharray="5 3"/>`,
			x, padTop, x, h-padBottom, color))
		ly := padTop + 10 + float64(i%3)*12
		b.raw(fmt.Sprintf(`<text class="marker" x="%.1f" y="%.1f" fill="%s">%s</text>`, x+3, ly, color, esc(truncate(m.Label, 40))))
	}

	// Data.
	b.raw(fmt.Sprintf(`<clipPath id="%s"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath>`,
		b.clipID(), padLeft, padTop, w-right-padLeft, h-padBottom-padTop))
	for _, s := range p.Series {
		var pts []string
		for _, pt := range s.Pts {
			if p.Y.Kind == logarithmic && pt.Y <= 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", sx.px(p.X.Kind.pos(pt.X)), sy.px(p.Y.Kind.pos(pt.Y))))
		}
		if len(pts) == 0 {
			continue
		}
		dash := ""
		if s.Dash {
			dash = ` stroke-dasharray="6 4"`
		}
		if len(pts) == 1 {
			x, y, _ := strings.Cut(pts[0], ",")
			b.raw(fmt.Sprintf(`<circle cx="%s" cy="%s" r="3" fill="%s"/>`, x, y, s.Color))
			continue
		}
		b.raw(fmt.Sprintf(`<polyline clip-path="url(#%s)" fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`,
			b.clipID(), s.Color, dash, strings.Join(pts, " ")))
	}

	// Legend.
	if !p.NoLegend {
		lx := float64(w-right) + 14
		for i, s := range p.Series {
			y := float64(padTop) + 8 + float64(i)*18
			dash := ""
			if s.Dash {
				dash = ` stroke-dasharray="6 4"`
			}
			b.raw(fmt.Sprintf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"%s/>`,
				lx, y, lx+22, y, s.Color, dash))
			b.text(lx+28, y+4, "start", "legend", truncate(s.Name, 20))
		}
	}
	b.close()
	return template.HTML(b.String())
}

type bar struct {
	Label string
	Value float64 // negative: unknown
	Text  string
	Color string
}

type barChart struct {
	Title, YLabel string
	Bars          []bar
	W, H          int
	// YMax, if set, is the least top of the value axis (charts that share
	// a scale).
	YMax float64
}

func (c barChart) svg(id int) template.HTML {
	w, h := c.W, c.H
	if w == 0 {
		w = 500
	}
	if h == 0 {
		h = 250
	}
	const left, right, top, bottom = 64, 12, 30, 40
	var vals []float64
	for _, br := range c.Bars {
		if br.Value > 0 {
			vals = append(vals, br.Value*1.12)
		}
	}
	if c.YMax > 0 {
		vals = append(vals, c.YMax*1.12)
	}
	ax := axis{Kind: linear, Format: shortNum}
	lo, hi, ticks := ax.rangeOf(vals)
	sy := scale{lo, hi, float64(h - bottom), top}

	b := svgBuilder{id: id}
	b.open(w, h, c.Title)
	b.text(float64(w)/2, 16, "middle", "title", c.Title)
	for _, t := range ticks {
		y := sy.px(t.V)
		b.line(left, y, float64(w-right), y, "grid")
		b.text(left-6, y+4, "end", "tick", t.Label)
	}
	b.raw(fmt.Sprintf(`<text class="label" text-anchor="middle" transform="translate(14 %.1f) rotate(-90)">%s</text>`,
		float64(top+h-bottom)/2, esc(c.YLabel)))
	n := len(c.Bars)
	slot := float64(w-left-right) / float64(max(n, 1))
	bw := math.Min(slot*0.6, 90)
	// Labels too wide for one slot go on every stride-th bar, in full.
	const charPx = 7
	widest := 0
	for _, br := range c.Bars {
		widest = max(widest, len([]rune(br.Label)))
	}
	stride := max(int(math.Ceil(float64(widest*charPx)/slot)), 1)
	for i, br := range c.Bars {
		cx := left + slot*(float64(i)+0.5)
		if i%stride == 0 {
			b.text(cx, float64(h-bottom)+16, "middle", "tick", truncate(br.Label, int(slot*float64(stride)/charPx)))
		}
		if br.Value < 0 {
			b.text(cx, float64(h-bottom)-6, "middle", "value", "n/a")
			continue
		}
		y := sy.px(br.Value)
		b.raw(fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`,
			cx-bw/2, y, bw, math.Max(float64(h-bottom)-y, 0), br.Color))
		b.text(cx, y-5, "middle", "value", br.Text)
	}
	b.line(left, float64(h-bottom), float64(w-right), float64(h-bottom), "axis")
	b.close()
	return template.HTML(b.String())
}

// shortNum writes an axis number compactly: 0, 250, 1.5k, 20k, 3M.
func shortNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e3:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 10 || a == 0:
		return fmt.Sprintf("%.0f", v)
	}
	return trimZero(fmt.Sprintf("%.2f", v))
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// svgBuilder writes one <svg> element; id makes its clip path's id unique
// in the page.
type svgBuilder struct {
	strings.Builder
	id int
}

func (b *svgBuilder) open(w, h int, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, w, h, w, h)
	fmt.Fprintf(b, `<title>%s</title>`, esc(title))
}

func (b *svgBuilder) clipID() string { return fmt.Sprintf("clip%d", b.id) }

func (b *svgBuilder) close() { b.WriteString("</svg>") }

func (b *svgBuilder) raw(s string) { b.WriteString(s) }

func (b *svgBuilder) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, class, x1, y1, x2, y2)
}

func (b *svgBuilder) rect(x, y, w, h float64, class string) {
	fmt.Fprintf(b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, class, x, y, w, h)
}

func (b *svgBuilder) text(x, y float64, anchor, class, s string) {
	fmt.Fprintf(b, `<text class="%s" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, class, x, y, anchor, esc(s))
}

func esc(s string) string { return html.EscapeString(s) }
