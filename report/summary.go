package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/loadgen"
)

// Width is the widest line the terminal summary and Compare print: an
// 80-column terminal.
const Width = 80

// widthWriter carries the width text is wrapped to down to the functions
// that write parts of a summary; 0 means no wrapping (output that is not
// a terminal, where a reader or a script wants one line per item).
type widthWriter struct {
	io.Writer
	width int
}

// widthOf returns the width w wraps to: Width unless w says otherwise.
func widthOf(w io.Writer) int {
	if ww, ok := w.(*widthWriter); ok {
		return ww.width
	}
	return Width
}

// WriteSummaryWidth is WriteSummary with text wrapped to width columns;
// width 0 wraps nothing (for output that is not a terminal). Tables are
// always at most Width wide.
func WriteSummaryWidth(w io.Writer, run *Run, width int) error {
	buf := bufio.NewWriter(w)
	bw := &widthWriter{buf, width}
	writeRunHeader(bw, run)
	for _, s := range run.Scenarios {
		fmt.Fprintln(bw)
		writeScenario(bw, s)
	}
	if len(run.Scenarios) > 1 {
		first := run.Scenarios[0]
		for _, other := range run.Scenarios[1:] {
			fmt.Fprintf(bw, "\n== %s vs %s ==\n", other.Name, first.Name)
			writeSideBySide(bw, first, other, first.Name, other.Name, "ratio")
		}
	}
	writeScale(bw, run.ScaleModel)
	writeFindMax(bw, run.FindMax)
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "RESULT: "+run.Verdict())
	return buf.Flush()
}

// Verdict sums up a run in a line: PASS, PASS with warnings, UNKNOWN
// (not everything checked, or nothing ran) or FAIL, and why.
func (r *Run) Verdict() string {
	word, why := r.Outcome()
	if why != "" {
		return word + " (" + why + ")"
	}
	return word
}

// Outcome is the run's verdict word (PASS, UNKNOWN or FAIL) and why,
// the one judgement the summary and report.html print.
func (r *Run) Outcome() (word, why string) {
	checks, crossed, warned, unchecked := 0, 0, 0, 0
	for _, s := range r.Scenarios {
		switch {
		case len(s.Checks.Violations) > 0 || (!s.Checks.Passed && len(s.Checks.NotChecked) == 0):
			checks++
		case len(s.Checks.NotChecked) > 0:
			unchecked++
		}
		crossed += len(s.CrossedThresholds())
		if len(s.Checks.Warnings) > 0 {
			warned++
		}
	}
	var reasons []string
	if len(r.Scenarios) == 0 {
		// A run stopped before any scenario ran has nothing to vouch for.
		reasons = append(reasons, "nothing ran")
	}
	if checks > 0 {
		reasons = append(reasons, fmt.Sprintf("checks failed in %d of %d scenarios", checks, len(r.Scenarios)))
	}
	if unchecked > 0 {
		reasons = append(reasons, fmt.Sprintf("not everything checked in %d of %d scenarios", unchecked, len(r.Scenarios)))
	}
	if crossed > 0 {
		reasons = append(reasons, fmt.Sprintf("%d threshold(s) crossed", crossed))
	}
	if r.Partial {
		reasons = append(reasons, "partial run")
	}
	if warned > 0 {
		reasons = append(reasons, fmt.Sprintf("warnings in %d scenario(s)", warned))
	}
	noRate := r.FindMax != nil && r.FindMax.BestPerS <= 0
	if noRate {
		reasons = append([]string{"no rate tried was within " + r.FindMax.Target}, reasons...)
	}
	word = "PASS"
	switch {
	case checks+crossed > 0 || noRate:
		word = "FAIL"
	case unchecked > 0 || len(r.Scenarios) == 0:
		// Jepsen's :info: the outcome is unknown, which is no pass.
		word = "UNKNOWN"
	}
	return word, strings.Join(reasons, "; ")
}

func writeRunHeader(w io.Writer, run *Run) {
	title := run.Title
	if title == "" {
		title = "zkherd load report"
	}
	items := []string{title, "run " + orDash(run.RunID), "zkherd " + orDash(run.ZkherdVersion)}
	server := "server " + orDash(run.Server)
	if run.LocalEnsemble {
		server += " (local ensemble)"
	}
	items = append(items, server)
	if !run.StartedAt.IsZero() {
		items = append(items, run.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	fmt.Fprint(w, wrapItems("", items, widthOf(w)))
	if run.Partial {
		fmt.Fprintln(w, "PARTIAL: the run was stopped before it was done; figures cover what ran.")
	}
}

func writeScenario(w io.Writer, s *Scenario) {
	head := []string{s.Recipe, format.Count(int64(s.Clients)) + " clients",
		fmt.Sprintf("%.1fs window", s.DurationS), "checks " + passFail(s.Checks.Passed)}
	if s.Partial {
		head = append(head, "PARTIAL")
	}
	fmt.Fprint(w, wrapItems("== "+s.Name+" ==  ", head, widthOf(w)))

	errs := "errors " + format.Count(s.Errors.Total)
	if kinds := errorKinds(s.Errors.ByKind); kinds != "" {
		errs += " (" + kinds + ")"
	}
	fmt.Fprint(w, wrapItems("", []string{"operations " + format.Count(s.Operations),
		"throughput " + fmtNum(s.ThroughputPerS, 1) + "/s", errs}, widthOf(w)))
	writePhases(w, s)
	writeStages(w, s)

	if phases := s.Phases(); len(phases) > 0 {
		// At most Width columns: 16 + 8 + 7 + 5*8 (+ 9 for service p99).
		intended := false
		for _, p := range phases {
			intended = intended || s.LatencyMs[p].Corrected
		}
		fmt.Fprintln(w)
		head := fmt.Sprintf("%-16s %7s %6s %7s %7s %7s %7s %7s", "phase", "count", "rate/s", "p50", "p90", "p99", "p99.9", "max")
		if intended {
			head += fmt.Sprintf(" %8s", "svc p99")
		}
		fmt.Fprintln(w, head)
		for _, p := range phases {
			l := s.LatencyMs[p]
			row := fmt.Sprintf("%-16s %7s %6s %7s %7s %7s %7s %7s", truncate(p, 16), fmtCount(l.Count),
				fmtCount(int64(math.Round(ratio(float64(l.Count), s.DurationS)))), format.Ms(l.P50), format.Ms(l.P90), format.Ms(l.P99),
				format.Ms(l.P999), format.Ms(l.Max))
			if intended {
				svc := "-"
				if l.Corrected {
					svc = format.Ms(l.ServiceP99)
				}
				row += fmt.Sprintf(" %8s", svc)
			}
			fmt.Fprintln(w, row)
		}
		if intended {
			fmt.Fprint(w, wrapLine("", "Open model: latencies run from each operation's intended start (wrk2's method); svc p99 is from the call alone.", widthOf(w)))
		}
		fmt.Fprintln(w)
	}
	if rate := s.TargetRatePerS; rate > 0 {
		fmt.Fprint(w, wrapLine("rate: ", fmt.Sprintf("target %s/s, achieved %s/s (%.0f%%)", fmtNum(rate, 1),
			fmtNum(s.achievedRate(), 1), 100*s.achievedRate()/rate), widthOf(w)))
	}

	h := s.Herd
	var items []string
	for _, f := range figures.For(s.recipe()) {
		items = append(items, fmtFigure(f, h.Figure(f.Key))+" "+f.LabelFor(s.recipe()))
	}
	line := "cost: "
	if s.recipe().HandsOut { // the herd measures mean something
		line = "herd: "
	}
	fmt.Fprint(w, wrapItems(line, items, widthOf(w)))
	if h.MntrError != "" {
		fmt.Fprint(w, wrapItems("      ", []string{"server counters unavailable: " + usermsg.Clean(h.MntrError)}, widthOf(w)))
	}
	if a := s.Anomalies; a != nil {
		fmt.Fprint(w, wrapItems("latency anomalies: ", []string{
			format.Count(a.OverRange) + " over range (recorded at the top)",
			format.Count(a.Negative) + " negative (recorded as 0)",
			format.Count(a.Lost) + " lost", format.Count(a.UnknownPhase) + " unknown phase",
		}, widthOf(w)))
	}
	writeFaults(w, s)
	checks := s.CheckList()
	fmt.Fprint(w, wrapItems("checks: "+checksStatus(s.Checks)+"  ", checkItems(checks, loadgen.GroupCounted), widthOf(w)))
	for _, it := range checkItems(checks, loadgen.GroupLinearizability) {
		fmt.Fprint(w, wrapLine("", it, widthOf(w)))
	}
	for _, v := range s.Checks.Violations {
		fmt.Fprint(w, wrapLine("VIOLATION: ", v, widthOf(w)))
	}
	for _, v := range s.Checks.NotChecked {
		fmt.Fprint(w, wrapLine("NOT CHECKED: ", v, widthOf(w)))
	}
	for _, v := range s.Checks.Warnings {
		fmt.Fprint(w, wrapLine("WARNING: ", v, widthOf(w)))
	}
	if items := checkItems(checks, loadgen.GroupThresholds); len(items) > 0 {
		fmt.Fprint(w, wrapItems("thresholds: ", items, widthOf(w)))
	}
	events := slices.Clone(s.Events)
	slices.SortStableFunc(events, func(a, b Event) int { return cmpFloat(a.T, b.T) })
	for _, e := range events {
		fmt.Fprint(w, wrapLine(fmt.Sprintf("event %7.1fs %s: ", e.T, e.Kind), e.Detail, widthOf(w)))
	}
	for _, n := range s.Notes {
		fmt.Fprint(w, wrapLine("note: ", n, widthOf(w)))
	}
}

// achievedRate is the rate an open-model run's schedule ran at.
func (s *Scenario) achievedRate() float64 {
	if s.AchievedRatePerS > 0 {
		return s.AchievedRatePerS
	}
	return s.ThroughputPerS
}

// checkItems lists the checks of group in list as the summary writes
// them: a counted check with its count, failing ones marked "!"; a
// verdict (linearizability, a threshold) after its label and a colon.
func checkItems(list []loadgen.CheckOutcome, group loadgen.CheckGroup) []string {
	var items []string
	for _, ch := range list {
		switch {
		case ch.Group != group:
		case group != loadgen.GroupCounted:
			items = append(items, ch.Label+": "+ch.Value())
		case ch.Bad():
			items = append(items, ch.Label+" "+ch.Value()+" !")
		default:
			items = append(items, ch.Label+" "+ch.Value())
		}
	}
	return items
}

func errorKinds(byKind map[string]int64) string {
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for i, k := range kinds {
		kinds[i] = k + " " + format.Count(byKind[k])
	}
	return strings.Join(kinds, ", ")
}

// wrapLine writes head+text, wrapping text at spaces to width, continuation
// lines indented by two spaces.
func wrapLine(head, text string, width int) string {
	if width <= 0 {
		return head + strings.Join(strings.Fields(text), " ") + "\n"
	}
	var b strings.Builder
	line := head
	for i, word := range strings.Fields(text) {
		if i > 0 && len([]rune(line))+1+len([]rune(word)) > width {
			b.WriteString(line + "\n")
			line = "  " + word
			continue
		}
		if i > 0 {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "~"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtSeconds(s float64) string {
	return (time.Duration(s*10) * time.Second / 10).String()
}

// checksStatus is a scenario's checks in a word: PASS, FAIL (a
// violation), or NOT CHECKED (none found, but not everything could be
// checked).
func checksStatus(c Checks) string {
	if !c.Passed && len(c.Violations) == 0 && len(c.NotChecked) > 0 {
		return "NOT CHECKED"
	}
	return passFail(c.Passed)
}
