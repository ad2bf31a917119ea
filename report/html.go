package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
)

//go:embed report.html.tmpl
var htmlTemplate string

var pageTemplate = template.Must(template.New("report").Parse(htmlTemplate))

// WriteHTML writes report.html: one self-contained page (inline CSS and
// SVG, no script, nothing fetched) with the verdict, the herd-vs-fair
// comparison when the run has several scenarios (bar charts and the main
// phase's percentile spectrum), and per scenario its checks, phase table,
// percentile spectrum, latency and throughput over time with events marked.
func WriteHTML(w io.Writer, run *Run) error {
	if err := pageTemplate.Execute(w, newPage(run)); err != nil {
		return fmt.Errorf("report: writing HTML: %w", err)
	}
	return nil
}

type page struct {
	Title, RunID, Version, Server, Started string
	Local, Partial, Passed                 bool
	PassedCount, Total                     int
	// Outcome is PASS, UNKNOWN or FAIL (Run.Outcome); Verdict says why;
	// Warned that it passed with warnings (not shown green).
	Outcome   string
	Verdict   string
	Warned    bool
	Side      *sideView
	Scenarios []scenarioView
	Scale     *scaleView
}

type sideView struct {
	Headlines  []string
	Bars       []template.HTML
	Histograms []template.HTML // the main phase, shared scales
	// WaitGraphs are the lock scenarios' wait graphs, their wake bars on
	// one scale.
	WaitGraphs []template.HTML
	Spectrum   template.HTML
	Names      []string
	Rows       []cmpRow
}

type cmpRow struct {
	Label  string
	Values []string
}

type scenarioView struct {
	ID, Name, Recipe                         string
	Clients, Window, Ops, Throughput, Errors string
	ErrorKinds                               string
	Passed, Partial                          bool
	// Intended: some phase was measured from intended starts (open model).
	Intended                     bool
	Checks                       []checkRow
	Violations                   []string
	Warnings                     []string
	Thresholds                   []thresholdRow
	Phases                       []phaseRow
	Herd                         []kv
	MntrError                    string
	Anomalies                    string
	SpectrumSVG, LatencySVG      template.HTML
	Histograms                   []template.HTML // per phase
	WaitGraph                    template.HTML
	ThroughputSVG, PopulationSVG template.HTML
	DepthSVG                     template.HTML
	MainPhase                    string
	Events                       []eventRow
	Notes                        []string
	// Faults, recoveries and fencing (faults.go).
	Faults, Fencing []kv
	Recovery        []recoveryRow
	SessionTimeout  string
	Overlaps        []string
	// Linearizability is the oracle's line; LinWindow the failing window
	// of a violation, LinViz porcupine's drawing of it (a whole page).
	Linearizability string
	LinWindow       []linOpRow
	LinViz          string
}

type thresholdRow struct {
	Text string
	Bad  bool
}

type checkRow struct {
	Name, Value string
	Bad         bool
}

type phaseRow struct {
	Name, Color                                          string
	Count, Rate, P50, P90, P99, P999, Max, Mean, CorrP99 string
}

type kv struct{ Key, Value string }

type eventRow struct{ T, Kind, Detail, Color string }

// builder hands out unique ids to the page's SVG elements and holds the
// scales that panels compared with each other share.
type builder struct {
	seq int
	// shared, when set, are the y ranges of the per-scenario timelines,
	// common to every scenario of the run so their panels compare at a
	// glance.
	shared *sharedScales
	// wakeMax is the full scale of the wait graphs' wake bars: the most
	// any scenario's release woke.
	wakeMax float64
}

type sharedScales struct {
	tputMax          float64
	latMin, latMax   float64
	latLog           bool
	depthMax         float64
	sessionsMax      float64
	anyLat, anyDepth bool
}

// inWindow returns the timeline points up to the end of the operations
// window (the interval that contains it included): the clean-up after it
// would draw zeros that are not part of the run.
func inWindow(s *Scenario) []Point {
	end := s.WindowStartS + s.DurationS
	var out []Point
	for _, pt := range s.Timeline {
		if s.DurationS > 0 && pt.T-pt.IntervalS >= end {
			break
		}
		out = append(out, pt)
	}
	return out
}

// sharedScalesOf computes the y ranges common to the scenarios' timelines.
func sharedScalesOf(ss []*Scenario) *sharedScales {
	sh := &sharedScales{latMin: math.Inf(1)}
	var lat []xy
	for _, s := range ss {
		main := s.MainPhase()
		for _, pt := range inWindow(s) {
			sh.tputMax = math.Max(sh.tputMax, pt.ThroughputPerS)
			sh.sessionsMax = math.Max(sh.sessionsMax, float64(pt.SessionsAlive))
			if pt.QueueDepth != nil {
				sh.depthMax = math.Max(sh.depthMax, float64(*pt.QueueDepth))
				sh.anyDepth = true
			}
			if l, ok := pt.LatencyMs[main]; ok {
				lat = append(lat, xy{pt.T, l.P50}, xy{pt.T, l.Max})
				if l.P50 > 0 {
					sh.latMin = math.Min(sh.latMin, l.P50)
				}
				sh.latMax = math.Max(sh.latMax, l.Max)
				sh.anyLat = true
			}
		}
	}
	sh.latLog = spansDecades(lat)
	return sh
}

func ptr(v float64) *float64 { return &v }

func (b *builder) next() int { b.seq++; return b.seq }

// wakeScale is the full scale of g's wake bar: shared when the run
// compares scenarios, g's own otherwise (at least one waiter).
func (b *builder) wakeScale(g *WaitGraph) float64 {
	return max(b.wakeMax, g.WokePerRelease, 1)
}

func newPage(run *Run) page {
	var b builder
	p := page{
		Title:   run.Title,
		RunID:   orDash(run.RunID),
		Version: orDash(run.ZkherdVersion),
		Server:  orDash(run.Server),
		Local:   run.LocalEnsemble,
		Partial: run.Partial,
		Passed:  run.Passed(),
		Total:   len(run.Scenarios),
	}
	p.Outcome, p.Verdict = run.Outcome()
	if p.Title == "" {
		p.Title = "zkherd load report"
	}
	if !run.StartedAt.IsZero() {
		p.Started = run.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	used := map[string]bool{}
	if len(run.Scenarios) > 1 {
		b.shared = sharedScalesOf(run.Scenarios)
		for _, s := range run.Scenarios {
			if g := s.WaitGraph; g != nil {
				b.wakeMax = max(b.wakeMax, g.WokePerRelease)
			}
		}
	}
	for _, s := range run.Scenarios {
		p.Warned = p.Warned || len(s.Checks.Warnings) > 0
		if s.Checks.Passed && len(s.CrossedThresholds()) == 0 {
			p.PassedCount++
		}
		p.Scenarios = append(p.Scenarios, b.scenarioView(s, "s-"+fileBase(s.Name, used)))
	}
	if len(run.Scenarios) > 1 {
		p.Side = b.sideView(run.Scenarios)
	}
	p.Scale = b.scaleView(run.ScaleModel)
	return p
}

func (b *builder) sideView(ss []*Scenario) *sideView {
	v := &sideView{}
	first := ss[0]
	for _, o := range ss[1:] {
		var items []string
		if first.ThroughputPerS > 0 && o.ThroughputPerS > 0 {
			items = append(items, "throughput "+factor(first.ThroughputPerS, o.ThroughputPerS, "higher", "lower"))
		}
		items = append(items, figureHeadlines(first, o, figures.Figure.LongFor)...)
		main := first.MainPhase()
		if x, y := first.LatencyMs[main].P99, o.LatencyMs[main].P99; x > 0 && y > 0 {
			items = append(items, main+" p99 "+factor(x, y, "higher", "lower"))
		}
		if len(items) > 0 {
			v.Headlines = append(v.Headlines, fmt.Sprintf("%s vs %s: %s", o.Name, first.Name, joinDot(items)))
		}
	}

	bars := func(title, ylabel string, value func(*Scenario) float64, text func(float64) string) template.HTML {
		c := barChart{Title: title, YLabel: ylabel}
		for i, s := range ss {
			val := value(s)
			t := "n/a"
			if val >= 0 {
				t = text(val)
			}
			c.Bars = append(c.Bars, bar{Label: s.Name, Value: val, Text: t, Color: palette[i%len(palette)]})
		}
		return c.svg(b.next())
	}
	one := func(v float64) string { return fmtNum(v, 1) }
	main := first.MainPhase()
	v.Bars = []template.HTML{
		bars("Throughput", "operations per second", func(s *Scenario) float64 { return s.ThroughputPerS }, one),
	}
	for _, f := range figures.All() {
		if !f.Headline || !slices.ContainsFunc(ss, func(s *Scenario) bool { return f.AppliesTo(s.recipe()) }) {
			continue
		}
		long := f.LongFor(first.recipe())
		v.Bars = append(v.Bars, bars(strings.ToUpper(long[:1])+long[1:], f.LabelFor(first.recipe()),
			func(s *Scenario) float64 { return s.Herd.Figure(f.Key) }, one))
	}
	v.Bars = append(v.Bars, bars(main+" p99", "milliseconds", func(s *Scenario) float64 {
		if l, ok := s.LatencyMs[main]; ok {
			return l.P99
		}
		return -1
	}, format.Ms))

	v.Histograms = b.sideHistograms(ss)
	for _, s := range ss {
		if g := s.WaitGraph; g != nil {
			v.WaitGraphs = append(v.WaitGraphs, waitGraphSVG(g, b.wakeScale(g), b.next()))
		}
	}

	lp := linePlot{
		Title: main + " latency by percentile, every scenario",
		X:     axis{Kind: percentile, Label: "percentile"},
		Y:     axis{Kind: logarithmic, Label: "latency (log scale)", Format: tickMs},
	}
	for i, s := range ss {
		color := palette[i%len(palette)]
		if pts := s.Spectrum[main]; len(pts) > 0 {
			lp.Series = append(lp.Series, series{Name: s.Name, Color: color, Pts: spectrumXY(pts)})
		}
	}
	v.Spectrum = lp.svg(b.next())

	for _, s := range ss {
		v.Names = append(v.Names, s.Name)
	}
	row := func(label string, f func(*Scenario) string) {
		r := cmpRow{Label: label}
		for _, s := range ss {
			r.Values = append(r.Values, f(s))
		}
		v.Rows = append(v.Rows, r)
	}
	row("recipe", func(s *Scenario) string { return s.Recipe })
	row("clients", func(s *Scenario) string { return format.Count(int64(s.Clients)) })
	row("window", func(s *Scenario) string { return fmtSeconds(s.DurationS) })
	row("operations", func(s *Scenario) string { return format.Count(s.Operations) })
	row("throughput per second", func(s *Scenario) string { return fmtNum(s.ThroughputPerS, 1) })
	for _, q := range []struct {
		name string
		get  func(Latency) float64
	}{
		{"p50", func(l Latency) float64 { return l.P50 }},
		{"p99", func(l Latency) float64 { return l.P99 }},
		{"p99.9", func(l Latency) float64 { return l.P999 }},
		{"max", func(l Latency) float64 { return l.Max }},
	} {
		row(main+" "+q.name, func(s *Scenario) string {
			if l, ok := s.LatencyMs[main]; ok {
				return format.Ms(q.get(l))
			}
			return "-"
		})
	}
	for _, f := range figures.All() {
		if !slices.ContainsFunc(ss, func(s *Scenario) bool { return f.AppliesTo(s.recipe()) }) {
			continue
		}
		row(f.LongFor(first.recipe()), func(s *Scenario) string {
			if !f.AppliesTo(s.recipe()) {
				return "-"
			}
			return fmtFigure(f, s.Herd.Figure(f.Key))
		})
	}
	row("errors", func(s *Scenario) string { return format.Count(s.Errors.Total) })
	row("checks", func(s *Scenario) string { return passFail(s.Checks.Passed) })
	return v
}

func (b *builder) scenarioView(s *Scenario, id string) scenarioView {
	v := scenarioView{
		ID:         id,
		Name:       s.Name,
		Recipe:     s.Recipe,
		Clients:    format.Count(int64(s.Clients)),
		Window:     fmtSeconds(s.DurationS),
		Ops:        format.Count(s.Operations),
		Throughput: fmtNum(s.ThroughputPerS, 1),
		Errors:     format.Count(s.Errors.Total),
		ErrorKinds: errorKinds(s.Errors.ByKind),
		Passed:     s.Checks.Passed && len(s.CrossedThresholds()) == 0,
		Partial:    s.Partial,
		Violations: slices.Concat(s.Checks.Violations, prefixed("not checked: ", s.Checks.NotChecked)),
		Warnings:   s.Checks.Warnings,
		MntrError:  s.Herd.MntrError,
		MainPhase:  s.MainPhase(),
		Notes:      s.Notes,
	}
	v.LinWindow, v.LinViz = linearizabilityView(s.Linearizability)
	for _, ch := range s.CheckList() {
		switch ch.Group {
		case loadgen.GroupCounted:
			v.Checks = append(v.Checks, checkRow{Name: ch.Label, Value: ch.Value(), Bad: ch.Bad()})
		case loadgen.GroupLinearizability:
			v.Linearizability = ch.Value()
		case loadgen.GroupThresholds:
			v.Thresholds = append(v.Thresholds, thresholdRow{Text: ch.Label + ": " + ch.Value(), Bad: ch.Bad()})
		}
	}
	if s.TargetRatePerS > 0 {
		v.Throughput += fmt.Sprintf(" (open model: target %s, achieved %s)", fmtNum(s.TargetRatePerS, 1), fmtNum(s.achievedRate(), 1))
	}
	faultsView(&v, s)
	v.Histograms = b.histograms(s, phaseColor(s.MainPhase()))
	if g := s.WaitGraph; g != nil {
		v.WaitGraph = waitGraphSVG(g, b.wakeScale(g), b.next())
	}
	if a := s.Anomalies; a != nil {
		v.Anomalies = fmt.Sprintf("%s values over range (recorded at the top), %s negative (recorded as 0), %s lost, %s under an unknown phase",
			format.Count(a.OverRange), format.Count(a.Negative), format.Count(a.Lost), format.Count(a.UnknownPhase))
	}
	for _, f := range figures.For(s.recipe()) {
		v.Herd = append(v.Herd, kv{f.LongFor(s.recipe()), fmtFigure(f, s.Herd.Figure(f.Key))})
	}
	if names, values := countsLine(s.Herd.Totals); names != "" {
		v.Herd = append(v.Herd, kv{names, values})
	}

	phases := s.Phases()
	for _, p := range phases {
		l := s.LatencyMs[p]
		corr := "-"
		if l.Corrected {
			corr = format.Ms(l.ServiceP99)
			v.Intended = true
		}
		v.Phases = append(v.Phases, phaseRow{
			Name: p, Color: phaseColor(p), Count: format.Count(l.Count), Rate: fmtNum(ratio(float64(l.Count), s.DurationS), 1),
			P50: format.Ms(l.P50), P90: format.Ms(l.P90), P99: format.Ms(l.P99), P999: format.Ms(l.P999), Max: format.Ms(l.Max),
			Mean: format.Ms(l.Mean), CorrP99: corr,
		})
	}

	events := slices.Clone(s.Events)
	slices.SortStableFunc(events, func(a, b Event) int { return cmpFloat(a.T, b.T) })
	markers := eventMarkers(events)
	for _, e := range events {
		v.Events = append(v.Events, eventRow{T: fmt.Sprintf("%.1fs", e.T), Kind: e.Kind, Detail: e.Detail, Color: eventColor(e.Kind)})
	}

	if len(phases) > 0 {
		lp := linePlot{
			Title: s.Name + ": latency by percentile",
			X:     axis{Kind: percentile, Label: "percentile"},
			Y:     axis{Kind: logarithmic, Label: "latency (log scale)", Format: tickMs},
		}
		for _, p := range phases {
			lp.Series = append(lp.Series, series{Name: p, Color: phaseColor(p), Pts: spectrumXY(s.Spectrum[p])})
		}
		v.SpectrumSVG = lp.svg(b.next())
	}

	if len(s.Timeline) > 0 {
		main := v.MainPhase
		var p50, p99, pmax, tput, errs, alive, depth []xy
		hasErrs, hasDepth := false, false
		for _, pt := range inWindow(s) {
			if l, ok := pt.LatencyMs[main]; ok {
				p50 = append(p50, xy{pt.T, l.P50})
				p99 = append(p99, xy{pt.T, l.P99})
				pmax = append(pmax, xy{pt.T, l.Max})
			}
			tput = append(tput, xy{pt.T, pt.ThroughputPerS})
			errs = append(errs, xy{pt.T, ratio(float64(pt.Errors), pt.IntervalS)})
			hasErrs = hasErrs || pt.Errors > 0
			alive = append(alive, xy{pt.T, float64(pt.SessionsAlive)})
			if pt.QueueDepth != nil {
				depth = append(depth, xy{pt.T, float64(*pt.QueueDepth)})
				hasDepth = true
			}
		}
		xAxis := axis{Kind: linear, Label: "seconds since start", Format: func(v float64) string { return trimZero(fmt.Sprintf("%.1f", v)) }}
		if s.DurationS > 0 {
			xAxis.Min, xAxis.Max = ptr(0), ptr(s.WindowStartS+s.DurationS) // the time axis ends with the window
		}
		if main != "" && len(p50) > 0 {
			yKind := linear
			if spansDecades(append(append([]xy{}, p50...), pmax...)) {
				yKind = logarithmic
			}
			yAxis := axis{Kind: yKind, Format: tickMs}
			if sh := b.shared; sh != nil && sh.anyLat {
				// The same scale in every scenario, so they compare.
				yKind = linear
				yAxis = axis{Kind: linear, Format: tickMs, Min: ptr(0), Max: ptr(sh.latMax)}
				if sh.latLog {
					yKind = logarithmic
					yAxis = axis{Kind: logarithmic, Format: tickMs, Min: ptr(sh.latMin), Max: ptr(sh.latMax)}
				}
			}
			yAxis.Label = "latency"
			if yKind == logarithmic {
				yAxis.Label = "latency (log scale)"
			}
			v.LatencySVG = linePlot{
				Title:   s.Name + ": " + main + " latency per interval",
				X:       xAxis,
				Y:       yAxis,
				Series:  []series{{Name: main + " p50", Color: palette[0], Pts: p50}, {Name: main + " p99", Color: palette[1], Pts: p99}, {Name: main + " max", Color: palette[9], Dash: true, Pts: pmax}},
				Markers: markers,
			}.svg(b.next())
		}
		tpY := axis{Kind: linear, Label: "operations per second", Format: shortNum}
		if sh := b.shared; sh != nil {
			tpY.Min, tpY.Max = ptr(0), ptr(sh.tputMax)
		}
		tp := linePlot{
			Title:   s.Name + ": throughput per interval",
			X:       xAxis,
			Y:       tpY,
			Series:  []series{{Name: "operations/s", Color: palette[4], Pts: tput}},
			Markers: markers,
		}
		if hasErrs {
			tp.Series = append(tp.Series, series{Name: "errors/s", Color: palette[2], Pts: errs})
		}
		v.ThroughputSVG = tp.svg(b.next())
		pop := linePlot{
			Title:   s.Name + ": sessions alive",
			X:       xAxis,
			Y:       axis{Kind: linear, Label: "sessions", Format: shortNum},
			Series:  []series{{Name: "sessions alive", Color: palette[6], Pts: alive}},
			Markers: markers,
			H:       220,
		}
		if sh := b.shared; sh != nil {
			pop.Y.Min, pop.Y.Max = ptr(0), ptr(sh.sessionsMax)
		}
		v.PopulationSVG = pop.svg(b.next())
		if hasDepth {
			// Items, not sessions: a plot of its own, with its own axis.
			dp := linePlot{
				Title:   s.Name + ": queue depth",
				X:       xAxis,
				Y:       axis{Kind: linear, Label: "items queued", Format: shortNum},
				Series:  []series{{Name: "queue depth", Color: palette[8], Pts: depth}},
				Markers: markers,
				H:       220,
			}
			if sh := b.shared; sh != nil && sh.anyDepth {
				dp.Y.Min, dp.Y.Max = ptr(0), ptr(sh.depthMax)
			}
			v.DepthSVG = dp.svg(b.next())
		}
	}
	return v
}

func eventMarkers(events []Event) []marker {
	var ms []marker
	for _, e := range events {
		ms = append(ms, marker{X: e.T, Label: e.Kind + ": " + e.Detail, Color: eventColor(e.Kind)})
	}
	return ms
}

func eventColor(kind string) string {
	switch kind {
	case EventFault:
		return "#d35400"
	case EventRecover:
		return "#27ae60"
	case EventViolation:
		return "#c0392b"
	}
	return "#7f8c8d"
}

func phaseColor(p string) string {
	if i := slices.Index(metrics.Phases(), metrics.Phase(p)); i >= 0 {
		return palette[i%len(palette)]
	}
	h := 0
	for _, c := range p {
		h = h*31 + int(c)
	}
	return palette[(h%len(palette)+len(palette))%len(palette)]
}

func spectrumXY(pts []SpectrumPoint) []xy {
	out := make([]xy, len(pts))
	for i, p := range pts {
		out[i] = xy{p.Percentile, p.Ms}
	}
	return out
}

// spansDecades reports whether the positive values span more than 1.5
// decades, when a log scale shows them better.
func spansDecades(pts []xy) bool {
	lo, hi := math.Inf(1), 0.0
	for _, p := range pts {
		if p.Y > 0 {
			lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
		}
	}
	return hi > 0 && hi/lo > math.Pow(10, 1.5)
}

// tickMs writes an axis value given in milliseconds: 100us, 2ms, 1.5s,
// 1000s.
func tickMs(ms float64) string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
	switch {
	case ms == 0:
		return "0"
	case ms < 1:
		return g(ms*1000) + "us"
	case ms < 1000:
		return g(ms) + "ms"
	}
	return g(ms/1000) + "s"
}

func joinDot(items []string) string {
	out := ""
	for i, it := range items {
		if i > 0 {
			out += " · "
		}
		out += it
	}
	return out
}

// prefixed is each line of lines after prefix.
func prefixed(prefix string, lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, prefix+l)
	}
	return out
}
