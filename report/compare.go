package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/format"
)

// Compare prints two runs side by side, scenario by scenario, with the
// ratio B/A of every figure (for `zkherd report compare A B`). Scenarios
// are paired by name; when each run has one scenario they are paired
// whatever their names; the rest are listed as only in A or only in B.
func Compare(w io.Writer, a, b *Run) error {
	bw := bufio.NewWriter(w)
	for _, x := range []struct {
		label string
		run   *Run
	}{{"A", a}, {"B", b}} {
		items := []string{"run " + orDash(x.run.RunID), "zkherd " + orDash(x.run.ZkherdVersion),
			"server " + orDash(x.run.Server)}
		if !x.run.StartedAt.IsZero() {
			items = append(items, x.run.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		}
		if x.run.Title != "" {
			items = append([]string{x.run.Title}, items...)
		}
		if x.run.Partial {
			items = append(items, "PARTIAL")
		}
		fmt.Fprint(bw, wrapItems(x.label+": ", items, widthOf(bw)))
	}
	pairs, onlyA, onlyB := pairScenarios(a.Scenarios, b.Scenarios)
	for _, p := range pairs {
		title := p[0].Name
		if p[1].Name != p[0].Name {
			title = p[0].Name + " (A) vs " + p[1].Name + " (B)"
		}
		fmt.Fprintf(bw, "\n== %s ==\n", title)
		writeSideBySide(bw, p[0], p[1], "A", "B", "B/A")
	}
	for _, s := range onlyA {
		fmt.Fprintf(bw, "\nonly in A: %s\n", s.Name)
	}
	for _, s := range onlyB {
		fmt.Fprintf(bw, "\nonly in B: %s\n", s.Name)
	}
	return bw.Flush()
}

func pairScenarios(a, b []*Scenario) (pairs [][2]*Scenario, onlyA, onlyB []*Scenario) {
	if len(a) == 1 && len(b) == 1 {
		return [][2]*Scenario{{a[0], b[0]}}, nil, nil
	}
	matched := map[*Scenario]bool{}
	for _, x := range a {
		i := slices.IndexFunc(b, func(y *Scenario) bool { return y.Name == x.Name && !matched[y] })
		if i < 0 {
			onlyA = append(onlyA, x)
			continue
		}
		matched[b[i]] = true
		pairs = append(pairs, [2]*Scenario{x, b[i]})
	}
	for _, y := range b {
		if !matched[y] {
			onlyB = append(onlyB, y)
		}
	}
	return pairs, onlyA, onlyB
}

// writeSideBySide prints a table of two scenarios' figures with the ratio
// b/a (its column headed ratioHead), then a verdict on the herd measures.
func writeSideBySide(w io.Writer, a, b *Scenario, labelA, labelB, ratioHead string) {
	printRow := func(label, x, y, r string) {
		line := fmt.Sprintf("%-28s %18s %18s %10s", truncate(label, 28), truncate(x, 18), truncate(y, 18), r)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	printRow("", labelA, labelB, ratioHead)
	text := func(label, x, y string) { printRow(label, x, y, "") }
	num := func(label string, x, y float64, f func(float64) string) {
		printRow(label, f(x), f(y), fmtRatio(x, y))
	}
	count := func(v float64) string { return format.Count(int64(v)) }
	one := func(v float64) string { return fmtNum(v, 1) }

	if a.Name != b.Name && (labelA != a.Name || labelB != b.Name) {
		text("scenario", a.Name, b.Name)
	}
	text("recipe", a.Recipe, b.Recipe)
	num("clients", float64(a.Clients), float64(b.Clients), count)
	num("window", a.DurationS, b.DurationS, fmtSeconds)
	num("operations", float64(a.Operations), float64(b.Operations), count)
	num("throughput/s", a.ThroughputPerS, b.ThroughputPerS, one)
	num("errors", float64(a.Errors.Total), float64(b.Errors.Total), count)

	main := a.MainPhase()
	if main == "" {
		main = b.MainPhase()
	}
	for _, p := range a.Phases() {
		la, okA := a.LatencyMs[p]
		lb, okB := b.LatencyMs[p]
		if !okA || !okB {
			continue
		}
		num(p+" p50", la.P50, lb.P50, format.Ms)
		if p == main {
			num(p+" p90", la.P90, lb.P90, format.Ms)
		}
		num(p+" p99", la.P99, lb.P99, format.Ms)
		if p == main {
			num(p+" p99.9", la.P999, lb.P999, format.Ms)
			num(p+" max", la.Max, lb.Max, format.Ms)
			if la.Corrected && lb.Corrected {
				num(p+" service p99", la.ServiceP99, lb.ServiceP99, format.Ms)
			}
		}
	}
	for _, f := range figures.All() {
		if f.AppliesTo(a.recipe()) || f.AppliesTo(b.recipe()) {
			num(f.LabelFor(a.recipe()), a.Herd.Figure(f.Key), b.Herd.Figure(f.Key), func(v float64) string { return fmtFigure(f, v) })
		}
	}
	text("checks", passFail(a.Checks.Passed), passFail(b.Checks.Passed))

	var verdict []string
	if a.ThroughputPerS > 0 && b.ThroughputPerS > 0 {
		verdict = append(verdict, "throughput "+factor(a.ThroughputPerS, b.ThroughputPerS, "higher", "lower"))
	}
	verdict = append(verdict, figureHeadlines(a, b, figures.Figure.LabelFor)...)
	if la, lb := a.LatencyMs[main], b.LatencyMs[main]; la.P99 > 0 && lb.P99 > 0 {
		verdict = append(verdict, main+" p99 "+factor(la.P99, lb.P99, "higher", "lower"))
	}
	if len(verdict) > 0 {
		fmt.Fprint(w, wrapItems(labelB+" vs "+labelA+": ", verdict, widthOf(w)))
	}
}

// figureHeadlines says how each headline figure known in both a and b
// changed, labelled by label.
func figureHeadlines(a, b *Scenario, label func(figures.Figure, figures.Recipe) string) []string {
	var out []string
	for _, f := range figures.All() {
		if !f.Headline || !f.AppliesTo(a.recipe()) || !f.AppliesTo(b.recipe()) {
			continue
		}
		if x, y := a.Herd.Figure(f.Key), b.Herd.Figure(f.Key); x > 0 && y > 0 {
			out = append(out, label(f, a.recipe())+" "+factor(x, y, "higher", "lower"))
		}
	}
	return out
}

// factor says how b compares with a: "12.3x higher", "250x lower", "about
// the same".
func factor(a, b float64, up, down string) string {
	r := b / a
	switch {
	case r >= 1.05:
		return fmtRatio(1, r) + " " + up
	case r <= 1/1.05:
		return fmtRatio(1, 1/r) + " " + down
	}
	return "about the same"
}
