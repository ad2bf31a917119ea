package sessions

import (
	"strings"
	"testing"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

func TestView(t *testing.T) {
	for _, fx := range []string{"standalone", "ensemble3_member_down"} {
		for _, sz := range tuitest.Sizes {
			t.Run(fx+"_"+sz.Name, func(t *testing.T) {
				m := New(common.New(sz.Width, sz.Height))
				m.SetSize(sz.Width, sz.Height)
				m, _ = m.Update(common.SnapshotMsg{Snapshot: tuitest.Cluster(t, fx)})
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

func TestFilter(t *testing.T) {
	m := New(common.New(120, 40))
	m, _ = m.Update(common.SnapshotMsg{Snapshot: tuitest.Cluster(t, "standalone")})
	m, _ = m.Update(common.FilterMsg{Text: "herd-lock"})
	got := tuitest.Plain(m.View())
	tuitest.Golden(t, got)
	if !strings.Contains(got, "filter: herd-lock") {
		t.Errorf("header does not show the filter:\n%s", got)
	}
}

// TestConfirming: before the servers' first answers, sessions and watches
// are being confirmed, not unknown.
func TestConfirming(t *testing.T) {
	m := New(common.New(120, 24))
	m.SetSize(120, 24)
	m, _ = m.Update(common.SnapshotMsg{Snapshot: &inspect.Snapshot{Cluster: inspect.Cluster{
		Pending: true, WatchesUnknown: true, WatchesPending: true, SessionsUnknown: true, SessionsComplete: false, TotalWatches: -1,
		Members: []inspect.Member{{Addr: "127.0.0.1:2181", Pending: true}}}}})
	got := tuitest.Plain(m.View())
	for _, want := range []string{"sessions: confirming…", "watches: confirming…"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	for _, wrong := range []string{"unknown", "partial"} {
		if strings.Contains(got, wrong) {
			t.Errorf("screen says %q before the servers answered:\n%s", wrong, got)
		}
	}
}

// TestDrillToGoneSession: a drill-down to a session the servers no longer
// list says so instead of showing another session's line.
func TestDrillToGoneSession(t *testing.T) {
	m := New(common.New(120, 40))
	m.SetSize(120, 40)
	m, _ = m.Update(common.SnapshotMsg{Snapshot: tuitest.Cluster(t, "standalone")})
	m, _ = m.Update(common.ShowMsg{Target: "0xdead"})
	v := tuitest.Plain(m.View())
	if !strings.Contains(v, "0xdead is not among the servers' sessions now") {
		t.Errorf("view of a gone session:\n%s", v)
	}
	if loc, _ := m.Place(); loc != "0xdead" {
		t.Errorf("place = %q, want the session shown", loc)
	}
}
