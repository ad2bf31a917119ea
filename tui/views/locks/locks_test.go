package locks

import (
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

func TestView(t *testing.T) {
	type step struct {
		keys   []string
		filter string
	}
	tests := []struct {
		name    string
		fixture string
		steps   []step
	}{
		{"fair_lock", "standalone", nil},
		{"herd_lock", "standalone", []step{{keys: []string{"j"}}}},
		{"holder_gone", "ensemble3_member_down", []step{{keys: []string{"j", "j"}}}},
		{"filtered", "ensemble3", []step{{filter: "herd"}}},
	}
	for _, tt := range tests {
		for _, sz := range tuitest.Sizes {
			t.Run(tt.name+"_"+sz.Name, func(t *testing.T) {
				m := New(common.New(sz.Width, sz.Height))
				m.SetSize(sz.Width, sz.Height)
				m, _ = m.Update(common.SnapshotMsg{Snapshot: tuitest.Cluster(t, tt.fixture)})
				for _, s := range tt.steps {
					for _, k := range s.keys {
						m, _ = m.Update(tuitest.Key(k))
					}
					if s.filter != "" {
						m, _ = m.Update(common.FilterMsg{Text: s.filter})
					}
				}
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

// TestLongChain: thousands of waiters show the head of the chain and
// counts, and scroll.
func TestLongChain(t *testing.T) {
	snap := &inspect.Snapshot{Locks: []inspect.Lock{*tuitest.Chain(10000, true)}}
	m := New(common.New(80, 24))
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	got := tuitest.Plain(m.View())
	tuitest.Golden(t, got)
	for _, want := range []string{"1 holding → 9,999 waiting", "!100 want 102", "! none"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	m, _ = m.Update(tuitest.Key("tab"))
	m, _ = m.Update(tuitest.Key("G"))
	got = tuitest.Plain(m.View())
	if !strings.Contains(got, "row 10,000 of 10,000") || !strings.Contains(got, "9999 └▶wait") {
		t.Errorf("after G the chain does not show its last row:\n%s", got)
	}
}

// TestLocksComeAndGo: the cursor follows its lock from snapshot to
// snapshot, and snapshots with fewer locks (a run ending) are fine.
func TestLocksComeAndGo(t *testing.T) {
	full := tuitest.Cluster(t, "ensemble3_member_down")
	m := New(common.New(80, 24))
	m, _ = m.Update(common.SnapshotMsg{Snapshot: full})
	m, _ = m.Update(tuitest.Key("G"))
	if got := m.selectedPath(); got != "/app/locks/stale" {
		t.Fatalf("selected %q, want /app/locks/stale", got)
	}
	m, _ = m.Update(common.SnapshotMsg{Snapshot: &inspect.Snapshot{}})
	if got := m.selectedPath(); got != "" {
		t.Errorf("selected %q with no lock", got)
	}
	tuitest.CheckSize(t, tuitest.Plain(m.View()), 80, 24)
	reordered := *full
	reordered.Locks = []inspect.Lock{full.Locks[2], full.Locks[0]}
	m, _ = m.Update(common.SnapshotMsg{Snapshot: full})
	m, _ = m.Update(tuitest.Key("G"))
	m, _ = m.Update(common.SnapshotMsg{Snapshot: &reordered})
	if got := m.selectedPath(); got != "/app/locks/stale" {
		t.Errorf("after reordering selected %q, want /app/locks/stale", got)
	}
}

// TestConfirming: the first snapshot, taken before the servers' first
// answers, shows the chain with its waiters' watches being confirmed, not
// unknown and not missing.
func TestConfirming(t *testing.T) {
	l := tuitest.Chain(4, false)
	for i := range l.Entries {
		l.Entries[i].Watching, l.Entries[i].Endpoint = nil, ""
	}
	l.WatchUnknown, l.WatchPending = true, true
	snap := &inspect.Snapshot{
		Cluster: inspect.Cluster{Pending: true, WatchesUnknown: true, WatchesPending: true, SessionsUnknown: true,
			Members: []inspect.Member{{Addr: "127.0.0.1:2181", Pending: true}}},
		Locks: []inspect.Lock{*l},
	}
	for _, width := range []int{80, 120} {
		m := New(common.New(width, 24))
		m.SetSize(width, 24)
		m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
		got := tuitest.Plain(m.View())
		if !strings.Contains(got, "confirming watches…") || strings.Count(got, "confirming…") != 3 {
			t.Errorf("width %d: want the heading and each of the 3 waiters confirming:\n%s", width, got)
		}
		for _, wrong := range []string{"unknown", "none", "no watch"} {
			if strings.Contains(got, wrong) {
				t.Errorf("width %d: screen says %q before the servers answered:\n%s", width, wrong, got)
			}
		}
	}
	// Scanning: before the first walk of the tree ends, no lock found yet
	// is not "no lock found".
	m := New(common.New(80, 24))
	m.SetSize(80, 24)
	m, _ = m.Update(common.SnapshotMsg{Snapshot: &inspect.Snapshot{Scanning: true, Cluster: snap.Cluster}})
	if got := tuitest.Plain(m.View()); !strings.Contains(got, "scanning the tree for locks…") || strings.Contains(got, "no lock found") {
		t.Errorf("while scanning:\n%s", got)
	}
	// The paced walk's progress: how far it has got.
	m = New(common.New(120, 24))
	m.SetSize(120, 24)
	m, _ = m.Update(common.SnapshotMsg{Snapshot: &inspect.Snapshot{Scanning: true, ScanRead: 412, Cluster: snap.Cluster}})
	if got := tuitest.Plain(m.View()); !strings.Contains(got, "scanning the tree… 412 directories read so far") {
		t.Errorf("while scanning, 412 directories read:\n%s", got)
	}
}

// TestLastRead: a still lock directory is read less often
// (inspect/still.go); its chain is then older than the snapshot, and the
// view says how much, in the heading and over the chain, rather than
// passing it off as fresh. A chain read for the snapshot says nothing.
func TestLastRead(t *testing.T) {
	m := New(common.New(120, 30))
	m.SetSize(120, 30)
	snap := tuitest.Cluster(t, "standalone")
	if len(snap.Locks) < 2 {
		t.Fatal("the fixture has fewer than two locks")
	}
	for i := range snap.Locks {
		snap.Locks[i].ReadAt = snap.At.Add(time.Millisecond) // read for this snapshot
	}
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	if got := tuitest.Plain(m.View()); strings.Contains(got, "last read") || strings.Contains(got, "still") {
		t.Errorf("chains read for the snapshot, said to be older:\n%s", got)
	}
	snap.Locks[0].ReadAt = snap.At.Add(-5200 * time.Millisecond)
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	got := tuitest.Plain(m.View())
	for _, want := range []string{"1 still: last read up to 6s ago", "· last read 6s ago ·"} {
		if !strings.Contains(got, want) {
			t.Errorf("a chain read 5.2 s before the snapshot: the screen lacks %q:\n%s", want, got)
		}
	}
}
