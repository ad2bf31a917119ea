package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestNotCheckedIsNoPass (issue 22, finding 2): a scenario whose servers
// vanished has checks that could not run. The summary says "not checked"
// where a count would be, names what was not checked, and the verdict is
// no PASS.
func TestNotCheckedIsNoPass(t *testing.T) {
	s := &Scenario{Name: "fair-lock", Recipe: "fair-lock", Clients: 10, LatencyMs: map[string]Latency{}}
	s.Checks.LeftoverZnodes = -1
	s.Checks.NotChecked = []string{"leftover znodes: could not look at the namespace: no connection", "the window while the servers were unreachable: 3.4s of 8s"}
	s.Checks.Violations = []string{}
	run := &Run{Scenarios: []*Scenario{s}}
	var b bytes.Buffer
	if err := WriteSummaryWidth(&b, run, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"checks: NOT CHECKED", "leftover znodes not checked", "NOT CHECKED: the window while the servers were unreachable", "RESULT: UNKNOWN (not everything checked in 1 of 1 scenarios)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "RESULT: PASS") || strings.Contains(out, "leftover znodes 0") {
		t.Errorf("summary reads as a pass:\n%s", out)
	}
	if !run.Failed() {
		t.Errorf("Failed() = false, want true: a CI gate must not pass it")
	}
}

// TestNothingRanIsNoPass: a run stopped before any scenario ran (a
// process of a distributed run stopped while it waited for the others)
// vouches for nothing: its verdict is UNKNOWN, never PASS.
func TestNothingRanIsNoPass(t *testing.T) {
	run := &Run{Partial: true}
	if got, want := run.Verdict(), "UNKNOWN (nothing ran; partial run)"; got != want {
		t.Errorf("Verdict() = %q, want %q", got, want)
	}
}

// TestHTMLVerdictIsTheSummarys: report.html's headline word is the
// summary's (Run.Outcome): a run whose checks could not run reads
// UNKNOWN in both, not FAIL in one and UNKNOWN in the other.
func TestHTMLVerdictIsTheSummarys(t *testing.T) {
	s := &Scenario{Name: "fair-lock", Recipe: "fair-lock", Clients: 10, LatencyMs: map[string]Latency{}}
	s.Checks.NotChecked = []string{"leftover znodes: could not look at the namespace: no connection"}
	for _, run := range []*Run{{Scenarios: []*Scenario{s}}, {Partial: true}} {
		var b bytes.Buffer
		if err := WriteHTML(&b, run); err != nil {
			t.Fatal(err)
		}
		word, why := run.Outcome()
		want := `">` + word + `<span>` + why + `</span></div>`
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.html lacks the summary's verdict %q", want)
		}
	}
}
