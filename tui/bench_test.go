package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
	"github.com/zkherd/zkherd/tui/loadview"
)

// bigCluster is a snapshot with one lock of n contenders (one session
// each) and n sessions.
func bigCluster(n int) *inspect.Snapshot {
	lock := tuitest.Chain(n, true)
	snap := &inspect.Snapshot{At: time.Unix(0, 0), Locks: []inspect.Lock{*lock}}
	for i, e := range lock.Entries {
		snap.Cluster.Sessions = append(snap.Cluster.Sessions, inspect.Session{
			ID: e.Session, Endpoint: e.Endpoint, Member: "127.0.0.1:2181", LastOp: "EXIS",
			Ephemerals: []string{lock.Path + "/" + e.Node},
		})
		if i > 0 {
			snap.Cluster.Watches = append(snap.Cluster.Watches, inspect.PathWatch{Path: fmt.Sprintf("%s/%s", lock.Path, lock.Entries[i-1].Node), Sessions: []int64{e.Session}})
		}
	}
	snap.Cluster.Members = []inspect.Member{{Addr: "127.0.0.1:2181", Up: true, Mode: "standalone"}}
	return snap
}

// bigLoad is a real herd-vs-fair run (recorded, replayed through the
// feed) with its figures scaled to clients clients: what the dashboard gets
// does not grow with the clients (the wait graph keeps the first
// loadgen.MaxWaitersShown waiters), only the counts do.
func bigLoad(b *testing.B, clients int) *loadview.Snapshot {
	s := tuitest.Recorded(b, "herd_vs_fair", 0.8)
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		sc.Clients, sc.SessionsAlive = clients, clients
		if sc.Lock != nil {
			g := *sc.Lock
			g.WaitersTotal = clients - 1
			if len(g.Fan) > 0 && g.Fan[0].Waiters > 1 {
				g.Fan = append([]loadgen.WatchCount(nil), g.Fan...)
				g.Fan[0].Waiters = clients - 1
				g.WokePerRelease = float64(clients - 1)
			}
			sc.Lock = &g
		}
	}
	return s
}

// benchFrame measures one frame (View) of the root model showing view v at
// 120x40, after the data is in.
func benchFrame(b *testing.B, order []viewID, msgs ...tea.Msg) {
	m := newModel(b.Context(), common.New(120, 40), nil, order, feeds{}, "bench")
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, msg := range msgs {
		tm, _ = tm.Update(msg)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ok := cpuTime()
	n := 0
	for b.Loop() {
		_ = tm.View()
		n++
	}
	// Besides the wall time: the CPU time per frame, which a busy machine
	// does not inflate (the benchmark runs on one goroutine).
	if cpu1, ok1 := cpuTime(); ok && ok1 && n > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(time.Millisecond)/float64(n), "cpu-ms/frame")
	}
}

// BenchmarkView: one frame of the Locks view with a 10,000-waiter chain and
// of the load dashboard with 10,000 clients must render in at most 10 ms.
func BenchmarkView(b *testing.B) {
	b.Run("locks_10000_waiters", func(b *testing.B) {
		benchFrame(b, []viewID{viewLocks}, common.SnapshotMsg{Snapshot: bigCluster(10000)})
	})
	b.Run("locks_10000_waiters_scrolled", func(b *testing.B) {
		benchFrame(b, []viewID{viewLocks}, common.SnapshotMsg{Snapshot: bigCluster(10000)},
			tuitest.Key("tab"), tuitest.Key("G"))
	})
	b.Run("sessions_10000", func(b *testing.B) {
		benchFrame(b, []viewID{viewSessions}, common.SnapshotMsg{Snapshot: bigCluster(10000)})
	})
	b.Run("load_10000_clients", func(b *testing.B) {
		benchFrame(b, []viewID{viewLoad}, common.LoadMsg{Snapshot: bigLoad(b, 10000)})
	})
}

// BenchmarkUpdate: taking in a new snapshot of 10,000 sessions and waiters
// (what happens at most once per poll).
func BenchmarkUpdate(b *testing.B) {
	snap := bigCluster(10000)
	m := newModel(b.Context(), common.New(120, 40), nil, inspectViews, feeds{}, "bench")
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	b.ReportAllocs()
	for b.Loop() {
		tm, _ = tm.Update(common.SnapshotMsg{Snapshot: snap})
	}
}
