package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	fairWaiter = regexp.MustCompile(`├ wait  (lock-\d+|#\d+) c\d+ → (lock-\d+|#\d+)`)
	herdWoke   = regexp.MustCompile(`release woke (\d+)\.\d \(the herd\)`)
	herdFan    = regexp.MustCompile(`╞═▶ \d{2,} watch herd-lock`)
)

// TestLoadDashboardInTmux drives "zkherd load --scenario herd-vs-fair
// --clients 200" in a real terminal (issue 10): the fair lock's chain with
// its holder and waiters each with the node it watches, the herd's fan and
// how many a release woke (near 200), the histogram and the time plots;
// "?" opens the full help, "/" filters phases, q asks before stopping the
// run.
func TestLoadDashboardInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	out := t.TempDir()
	term := newTmuxScreen(t, 120, 40, bin+" load --scenario herd-vs-fair --clients 200 --duration 25s --out "+out+"; sleep 60")

	// The screen changes every second: each check passes when one capture
	// shows it.
	var screen, chain string
	herdMax := 0
	sawFan := false
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) && (chain == "" || herdMax < 150 || !sawFan) {
		time.Sleep(time.Second)
		screen = term.screen()
		for _, m := range herdWoke.FindAllStringSubmatch(screen, -1) {
			n, _ := strconv.Atoi(m[1])
			herdMax = max(herdMax, n)
		}
		sawFan = sawFan || herdFan.MatchString(screen)
		if strings.Contains(screen, "fair (fair lock) · running") && len(fairWaiter.FindAllString(screen, -1)) >= 3 &&
			strings.Contains(screen, "┌ HOLD  lock-") && strings.Contains(screen, "(its successor)") {
			chain = screen
		}
	}
	t.Logf("last capture:\n%s", screen)
	if chain == "" {
		t.Fatalf("the fair lock's chain (holder and at least 3 waiters with the nodes they watch) never showed")
	}
	t.Logf("capture with the fair chain:\n%s", chain)
	if herdMax < 150 {
		t.Errorf("the herd's release woke at most %d, want near 200", herdMax)
	}
	if !sawFan {
		t.Errorf("no herd fan (waiters all watching one node) on screen")
	}
	screen = chain
	for _, want := range []string{"ops/s", "p99 ", "p50 ", "◀p50", "acquire · p50"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q (histogram and time plots)", want)
		}
	}

	// The machine may be busy: each key's effect is waited for.
	waitFor := func(what string, ok func(string) bool) bool {
		t.Helper()
		until := time.Now().Add(15 * time.Second)
		for {
			s := term.screen()
			if ok(s) {
				return true
			}
			if time.Now().After(until) {
				t.Errorf("%s; screen:\n%s", what, s)
				return false
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	has := func(wants ...string) func(string) bool {
		// Runs of spaces count as one: the full help aligns its columns to
		// the widest key any view binds, which is not this test's to fix.
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		return func(s string) bool {
			s = squeeze(s)
			for _, w := range wants {
				if !strings.Contains(s, squeeze(w)) {
					return false
				}
			}
			return true
		}
	}
	term.press("?")
	waitFor("? does not show the full help", has("pgdn page down", "filter phases", "quit"))
	// A key sent right after Escape can reach the program in the same
	// read and be taken for Alt+key (CI under load lost "Escape", "q"
	// that way): Escape's effect is waited for before the next key.
	term.press("Escape")
	waitFor("Escape does not close the help", func(s string) bool { return !strings.Contains(s, "pgdn page down") })
	term.press("/", "h", "a", "n", "d", "Enter")
	waitFor(`"/hand" does not show the handoff phase`, has("handoff · p50", `filter "hand"`))
	term.press("Escape")
	waitFor("Escape does not clear the filter", func(s string) bool { return !strings.Contains(s, `filter "hand"`) })
	term.press("q")
	if !waitFor("q during the run does not ask first", has("still going")) {
		return
	}
	term.press("y")
	waitFor("y did not stop the run and print its summary", func(s string) bool {
		return strings.Contains(s, "report:") || strings.Contains(s, "interrupted")
	})
}
