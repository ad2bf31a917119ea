package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/loadgen"
)

func TestWaitGraphHTML(t *testing.T) {
	const dir = "/zkherd/runs/r/lock-000"
	node := func(n int) string { return dir + "/lock-" + strconv.Itoa(1000000000 + n)[1:] }
	fair := &WaitGraph{Path: dir, Locks: 1, WaitersTotal: 40, WokePerRelease: 1, Releases: 300,
		Holders: []Contender{{Client: 3, Node: node(10), ForMs: 2}}}
	for i := range 12 {
		fair.Waiters = append(fair.Waiters, Contender{Client: 10 + i, Node: node(11 + i), Watching: node(10 + i), ForMs: 5, WatchForMs: 4})
	}
	herd := &WaitGraph{Path: dir, Locks: 1, WaitersTotal: 99, WokePerRelease: 98, Releases: 30, Herd: true,
		Holders: []Contender{{Client: 1, Node: dir + "/herd-lock"}},
		Fan:     []loadgen.WatchCount{{Path: dir + "/herd-lock", Waiters: 90}}}
	herdScenario, fairScenario := herdLock.scenario(t), fairLock.scenario(t)
	herdScenario.WaitGraph, fairScenario.WaitGraph = herd, fair
	run := &Run{RunID: "x", Title: "herd-vs-fair", Scenarios: []*Scenario{herdScenario, fairScenario}}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, run); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	side, _, _ := strings.Cut(page[strings.Index(page, "Who waits on whom"):], "</div>")
	t.Run("chain", func(t *testing.T) {
		if got, want := strings.Count(side, `class="watch" d=`), wgChain; got != want {
			t.Errorf("got %d arrows from a waiter to the node it watches, want %d (the waiters drawn)", got, want)
		}
		if !strings.Contains(side, "… 32 more waiting") || !strings.Contains(side, "watches lock-000000010") {
			t.Errorf("chain lacks its waiters' watches or the count of the rest:\n%s", side)
		}
	})
	t.Run("fan", func(t *testing.T) {
		if got, want := strings.Count(side, `class="waiter"`), wgFanDots; got != want {
			t.Errorf("got %d waiters drawn in the fan, want %d", got, want)
		}
		if !strings.Contains(side, "90 waiters watch herd-lock") || !strings.Contains(side, "a release woke 98.0 (the herd)") {
			t.Errorf("fan lacks its watchers or its wake count:\n%s", side)
		}
	})
	t.Run("wake bars on one scale", func(t *testing.T) {
		widths := regexp.MustCompile(`class="wake" x="\d+" y="\d+" width="(\d+)"`).FindAllStringSubmatch(side, -1)
		if len(widths) != 2 {
			t.Fatalf("got %d wake bars side by side, want 2", len(widths))
		}
		h, _ := strconv.Atoi(widths[0][1])
		f, _ := strconv.Atoi(widths[1][1])
		if h != 260 || f > 4 {
			t.Errorf("wake bars %d (herd) and %d (fair), want 260 and at most 4: one scale, the herd's 98 at full width", h, f)
		}
	})
	t.Run("in each scenario", func(t *testing.T) {
		if got := strings.Count(page, `class="plot waitgraph`); got != 4 {
			t.Errorf("got %d wait graphs on the page, want 4 (side by side and in each scenario)", got)
		}
	})
}
