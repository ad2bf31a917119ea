package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/zkherd/zkherd/internal/format"
)

// Width is the widest line the terminal summary and Compare print.
const Width = 100

// WriteSummary prints the terminal summary of a run: per scenario the
// operations, rate and errors, a table of phases (count, rate, p50, p90,
// p99, p99.9, max, corrected p99), the herd measures and the checks with
// their violations; with several scenarios, the first side by side with
// each of the others; and the overall verdict. No line is wider than Width.
func WriteSummary(w io.Writer, run *Run) error {
	bw := bufio.NewWriter(w)
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
	fmt.Fprintln(bw)
	failed := 0
	for _, s := range run.Scenarios {
		if !s.Checks.Passed {
			failed++
		}
	}
	switch {
	case failed > 0:
		fmt.Fprintf(bw, "RESULT: FAIL (checks failed in %d of %d scenarios)\n", failed, len(run.Scenarios))
	case run.Partial:
		fmt.Fprintln(bw, "RESULT: PASS (partial run)")
	default:
		fmt.Fprintln(bw, "RESULT: PASS")
	}
	return bw.Flush()
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
	fmt.Fprint(w, wrapItems("", items, Width))
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
	fmt.Fprint(w, wrapItems("== "+s.Name+" ==  ", head, Width))

	errs := "errors " + format.Count(s.Errors.Total)
	if kinds := errorKinds(s.Errors.ByKind); kinds != "" {
		errs += " (" + kinds + ")"
	}
	fmt.Fprint(w, wrapItems("", []string{"operations " + format.Count(s.Operations),
		"throughput " + fmtNum(s.ThroughputPerS, 1) + "/s", errs}, Width))

	if phases := s.Phases(); len(phases) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%-16s %9s %8s %7s %7s %7s %7s %7s %8s  %s\n",
			"phase", "count", "rate/s", "p50", "p90", "p99", "p99.9", "max", "corr p99", "anomalies")
		for _, p := range phases {
			l := s.LatencyMs[p]
			corr := "-"
			if l.Corrected {
				corr = format.Ms(l.CorrectedP99)
			}
			an := ""
			if l.OverRange > 0 {
				an = format.Count(l.OverRange) + " over"
			}
			row := fmt.Sprintf("%-16s %9s %8s %7s %7s %7s %7s %7s %8s  %s", truncate(p, 16), format.Count(l.Count),
				fmtNum(ratio(float64(l.Count), s.DurationS), 1), format.Ms(l.P50), format.Ms(l.P90), format.Ms(l.P99),
				format.Ms(l.P999), format.Ms(l.Max), corr, an)
			fmt.Fprintln(w, strings.TrimRight(row, " "))
		}
		fmt.Fprintln(w)
	}

	h := s.Herd
	fmt.Fprint(w, wrapItems("herd: ", []string{
		fmtNum(h.WakeupsPerRelease, 1) + " wake-ups/release",
		fmtNum(h.ZKRequestsPerAcquisition, 1) + " zk requests/acquisition",
		fmtPerOp(h.ServerPacketsPerAcquisition) + " server packets/acquisition",
		fmtPerOp(h.WatchFanoutPerAcquisition) + " watch fan-out/acquisition",
	}, Width))
	if h.MntrError != "" {
		fmt.Fprint(w, wrapItems("      ", []string{"server counters unavailable: " + h.MntrError}, Width))
	}
	if a := s.Anomalies; a != nil {
		fmt.Fprint(w, wrapItems("latency anomalies: ", []string{
			format.Count(a.OverRange) + " over range (recorded at the top)",
			format.Count(a.Negative) + " negative (recorded as 0)",
			format.Count(a.Lost) + " lost", format.Count(a.UnknownPhase) + " unknown phase",
		}, Width))
	}
	writeFaults(w, s)
	fmt.Fprint(w, wrapItems("checks: "+passFail(s.Checks.Passed)+"  ", checkItems(s.Checks), Width))
	for _, v := range s.Checks.Violations {
		fmt.Fprint(w, wrapLine("VIOLATION: ", v, Width))
	}
	events := slices.Clone(s.Events)
	slices.SortStableFunc(events, func(a, b Event) int { return cmpFloat(a.T, b.T) })
	for _, e := range events {
		fmt.Fprint(w, wrapLine(fmt.Sprintf("event %7.1fs %s: ", e.T, e.Kind), e.Detail, Width))
	}
	for _, n := range s.Notes {
		fmt.Fprint(w, wrapLine("note: ", n, Width))
	}
}

// check is one correctness check's outcome.
type check struct {
	Name  string
	Count int64
	// Checked is false when the check does not apply (FIFO on a herd lock).
	Checked bool
	// Failure says whether a count above zero fails the run.
	Failure bool
	Extra   string
}

// Bad reports whether the check failed.
func (c check) Bad() bool { return c.Checked && c.Failure && c.Count > 0 }

// Value writes the count, "n/a" when not checked.
func (c check) Value() string {
	if !c.Checked {
		return "n/a"
	}
	return format.Count(c.Count) + c.Extra
}

func checkList(c Checks) []check {
	list := []check{
		{"mutual exclusion", c.MutualExclusionViolations, true, true, ""},
		{"fencing", c.FencingViolations, true, true, ""},
		{"FIFO bypasses", c.FIFOBypasses, c.FIFOChecked, true, fmt.Sprintf(" (max %d)", c.MaxBypass)},
		{"semaphore over-issued", c.SemaphoreOverIssued, true, true, ""},
		{"double leaders", c.DoubleLeaders, true, true, ""},
		{"lost items", c.LostItems, true, true, ""},
		{"duplicate items", c.DuplicateItems, true, true, ""},
		{"leftover znodes", c.LeftoverZnodes, true, true, ""},
	}
	if c.Unconsumed > 0 {
		list = append(list, check{"unconsumed items", c.Unconsumed, true, false, ""})
	}
	if c.ForeignGrants > 0 {
		list = append(list, check{"grants of nodes another client deleted", c.ForeignGrants, true, true, ""})
	}
	if c.ForeignDeletedItems > 0 {
		list = append(list, check{"items deleted by another client", c.ForeignDeletedItems, true, false, ""})
	}
	if c.ForeignRacedGrants > 0 || c.ForeignExcusedOverlaps > 0 {
		list = append(list, check{"grants racing another client's delete", c.ForeignRacedGrants, true, false,
			fmt.Sprintf(" (%d overlap(s) of its doing)", c.ForeignExcusedOverlaps)})
	}
	return list
}

// checkItems lists every check with its count, failing ones marked "!".
func checkItems(c Checks) []string {
	var items []string
	for _, ch := range checkList(c) {
		it := ch.Name + " " + ch.Value()
		if ch.Bad() {
			it += " !"
		}
		items = append(items, it)
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
