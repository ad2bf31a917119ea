package load

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
	"github.com/zkherd/zkherd/tui/loadview"
)

// herdVsFair is a real 200-client herd-vs-fair run (recorded by
// tuitest.TestRecord) replayed through the dashboard's feed: the herd done,
// the fair lock three quarters through.
func herdVsFair(t testing.TB) *loadview.Snapshot { return tuitest.Recorded(t, "herd_vs_fair", 0.8) }

func view(t testing.TB, w, h int, snap *loadview.Snapshot, msgs ...tea.Msg) Model {
	m := New(common.New(w, h))
	m.SetSize(w, h)
	m, _ = m.Update(common.LoadMsg{Snapshot: snap})
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m
}

func TestView(t *testing.T) {
	noBuckets := herdVsFair(t)
	for i := range noBuckets.Scenarios {
		phases := append([]loadview.Phase(nil), noBuckets.Scenarios[i].Phases...)
		for j := range phases {
			phases[j].Buckets = nil
		}
		noBuckets.Scenarios[i].Phases = phases
	}
	done := tuitest.Recorded(t, "herd_vs_fair", 1)
	done.Done, done.Report = true, "out/report.html"
	checked := tuitest.Recorded(t, "herd_vs_fair", 1)
	checked.Done = true
	for i := range checked.Scenarios {
		checked.Scenarios[i].Checks = []loadgen.CheckOutcome{
			{Key: "mutual_exclusion", Label: "mutual exclusion", Failure: true, Count: 2},
			{Key: "leftover_znodes", Label: "leftover znodes", Failure: true, Count: -1},
			{Key: "linearizability", Label: "linearizability", Failure: true, Group: loadgen.GroupLinearizability, Text: "ok (mutex: 40 operations in 1 partition; checked in 0.1 s)"},
			{Key: "threshold:acquire.p99<5s", Label: "acquire.p99<5s", Failure: true, Count: 1, Group: loadgen.GroupThresholds, Text: "7.2s CROSSED"},
		}
	}
	tests := []struct {
		name string
		snap *loadview.Snapshot
		keys []string
	}{
		{"herd_vs_fair", herdVsFair(t), nil},
		{"herd_vs_fair_next_phase", herdVsFair(t), []string{"tab"}},
		{"herd_vs_fair_scrolled", herdVsFair(t), []string{"j", "j"}},
		{"herd_vs_fair_done", done, nil},
		{"herd_vs_fair_checks", checked, nil},
		{"percentiles_only", noBuckets, nil},
		{"queue", tuitest.Recorded(t, "queue", 0.8), nil},
		{"empty", &loadview.Snapshot{Title: "fair-lock"}, nil},
	}
	for _, tt := range tests {
		for _, sz := range tuitest.Sizes {
			t.Run(tt.name+"_"+sz.Name, func(t *testing.T) {
				var msgs []tea.Msg
				for _, k := range tt.keys {
					msgs = append(msgs, tuitest.Key(k))
				}
				m := view(t, sz.Width, sz.Height, tt.snap, msgs...)
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

// TestLockPictures: the fair side shows its chain (the holder and waiters
// each with the node it watches), the herd side its fan and what a release
// woke, at 80x24 as at 120x40.
func TestLockPictures(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			got := tuitest.Plain(view(t, sz.Width, sz.Height, herdVsFair(t)).View())
			if n := strings.Count(got, "┌ HOLD"); n != 2 {
				t.Errorf("%d holders drawn, want one per side:\n%s", n, got)
			}
			watching := regexp.MustCompile(`├ wait  (lock-|#)\d+ c\d+ → (lock-|#)\d+`)
			if n := len(watching.FindAllString(got, -1)); n < 3 {
				t.Errorf("%d fair waiters with the node they watch, want at least 3:\n%s", n, got)
			}
			if !regexp.MustCompile(`╞═▶ \d+ watch `).MatchString(got) {
				t.Errorf("no herd fan:\n%s", got)
			}
			if !regexp.MustCompile(`release woke \d+\.\d \(the herd\)`).MatchString(got) {
				t.Errorf("no herd wake-up count:\n%s", got)
			}
			if !regexp.MustCompile(`release woke 1\.\d+ \(its successor\)`).MatchString(got) {
				t.Errorf("no fair wake-up count:\n%s", got)
			}
			for _, want := range []string{"ops/s", "p99", "p50", "◀p50", "◀p99"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q on screen:\n%s", want, got)
				}
			}
		})
	}
}

// TestKeys: tab changes the phase drawn, "/" filters phases (or scenarios),
// ":phase" picks one, the navigation keys scroll the waiters.
func TestKeys(t *testing.T) {
	snap := herdVsFair(t)
	first := tuitest.Plain(view(t, 120, 40, snap).View())
	if !strings.Contains(first, "acquire · p50") {
		t.Fatalf("the main phase is not drawn first:\n%s", first)
	}
	if got := tuitest.Plain(view(t, 120, 40, snap, tuitest.Key("tab")).View()); strings.Contains(got, "acquire · p50") {
		t.Errorf("tab did not change the phase:\n%s", got)
	}
	if got := tuitest.Plain(view(t, 120, 40, snap, common.FilterMsg{Text: "handoff"}).View()); !strings.Contains(got, "handoff · p50") {
		t.Errorf("filter handoff does not draw the handoff phase:\n%s", got)
	}
	got := tuitest.Plain(view(t, 120, 40, snap, common.FilterMsg{Text: "fair"}).View())
	if strings.Contains(got, "herd (herd") || !strings.Contains(got, "fair (fair") {
		t.Errorf("filter fair does not show the fair scenario alone:\n%s", got)
	}
	if got := tuitest.Plain(view(t, 120, 40, snap, common.CommandMsg{Name: "phase", Arg: "hold"}).View()); !strings.Contains(got, "hold · p50") {
		t.Errorf(":phase hold does not draw hold:\n%s", got)
	}
	waiter := regexp.MustCompile(`├ wait  ((lock-|#)\d+)`)
	before := waiter.FindStringSubmatch(first)
	after := waiter.FindStringSubmatch(tuitest.Plain(view(t, 120, 40, snap, tuitest.Key("j")).View()))
	if before == nil || after == nil || before[1] == after[1] {
		t.Errorf("j did not scroll the waiters: first %v, then %v", before, after)
	}
}

func TestFaultMarked(t *testing.T) {
	snap := herdVsFair(t)
	fair := &snap.Scenarios[1]
	snap.Faults = []loadview.Fault{{At: fair.Started + 2*time.Second, What: "killed member 2 (leader)"}}
	got := tuitest.Plain(view(t, 120, 40, snap).View())
	if !strings.Contains(got, "killed member 2 (leader)") {
		t.Errorf("fault not listed:\n%s", got)
	}
	if strings.Count(got, "▲") < 2 {
		t.Errorf("fault not marked under the time plots:\n%s", got)
	}
}

// TestBottomShowsWaiters: G (bottom) and repeated pgdn show the last
// waiters of the chain, never a chain of "… N more" alone.
func TestBottomShowsWaiters(t *testing.T) {
	waiter := regexp.MustCompile(`├ wait  (lock-|#)\d+ c\d+ → (lock-|#)\d+`)
	for _, sz := range tuitest.Sizes {
		for _, keys := range [][]string{{"G"}, {"pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown"}} {
			t.Run(sz.Name+"_"+strings.Join(keys, "_"), func(t *testing.T) {
				var msgs []tea.Msg
				for _, k := range keys {
					msgs = append(msgs, tuitest.Key(k))
				}
				got := tuitest.Plain(view(t, sz.Width, sz.Height, herdVsFair(t), msgs...).View())
				if n := len(waiter.FindAllString(got, -1)); n < 3 {
					t.Errorf("%d fair waiters on screen after %v, want at least 3:\n%s", n, keys, got)
				}
			})
		}
	}
}

func TestPackItems(t *testing.T) {
	tests := []struct {
		items []string
		w     int
		want  []string
	}{
		{[]string{"a 1", "bb 2", "ccc 3"}, 40, []string{"a 1 · bb 2 · ccc 3"}},
		{[]string{"a 1", "bb 2", "ccc 3"}, 10, []string{"a 1 · bb 2", "ccc 3"}},
		{[]string{"a long item", "b"}, 5, []string{"a long item", "b"}},
		{nil, 10, nil},
	}
	for _, tt := range tests {
		got := packItems(tt.items, " · ", tt.w)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("packItems(%q, %d) = %q, want %q", tt.items, tt.w, got, tt.want)
		}
	}
}
