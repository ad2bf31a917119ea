package report

import (
	"strings"
	"testing"
)

// The time axis ends with the window: the clean-up after it is not drawn;
// scenarios compared in one report share their timelines' scales.
func TestTimelineWindowAndSharedScales(t *testing.T) {
	depth := int64(7)
	a := &Scenario{Name: "a", WindowStartS: 1, DurationS: 3, Timeline: []Point{
		{T: 1, IntervalS: 1, ThroughputPerS: 0}, {T: 2, IntervalS: 1, ThroughputPerS: 50},
		{T: 3, IntervalS: 1, ThroughputPerS: 60}, {T: 4, IntervalS: 1, ThroughputPerS: 55},
		{T: 5, IntervalS: 1, ThroughputPerS: 0}, {T: 6, IntervalS: 1, ThroughputPerS: 0},
	}}
	b := &Scenario{Name: "b", WindowStartS: 0.5, DurationS: 2, Timeline: []Point{
		{T: 1, IntervalS: 1, ThroughputPerS: 400, QueueDepth: &depth}, {T: 2, IntervalS: 1, ThroughputPerS: 380},
	}}
	if got := len(inWindow(a)); got != 4 {
		t.Errorf("points in a's window: got %d, want 4 (up to the interval holding its end at 4s)", got)
	}
	sh := sharedScalesOf([]*Scenario{a, b})
	if sh.tputMax != 400 || sh.depthMax != 7 || !sh.anyDepth {
		t.Errorf("shared scales: got throughput max %v, depth max %v (%v); want 400, 7", sh.tputMax, sh.depthMax, sh.anyDepth)
	}
}

// Width 0 (output that is not a terminal) wraps nothing: a long note stays
// on one line; at Width every line fits.
func TestSummaryWidth(t *testing.T) {
	long := "the load generator fell behind in 3 of 3 intervals; the machine's CPUs were busy with other programs: latencies include that wait"
	run := &Run{Scenarios: []*Scenario{{Name: "q", Recipe: "queue", Notes: []string{long},
		Checks: Checks{Passed: true, Warnings: []string{"queue saturated: " + long}}}}}
	var wrapped, flat strings.Builder
	if err := WriteSummaryWidth(&wrapped, run, Width); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummaryWidth(&flat, run, 0); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(wrapped.String(), "\n") {
		if len([]rune(line)) > Width {
			t.Errorf("wrapped line %d wide: %q", len(line), line)
		}
	}
	if !strings.Contains(flat.String(), "note: "+long+"\n") {
		t.Errorf("unwrapped summary split the note:\n%s", flat.String())
	}
	if !strings.Contains(flat.String(), "RESULT: PASS (warnings in 1 scenario(s))") {
		t.Errorf("verdict: want PASS with warnings, got:\n%s", flat.String())
	}
}
