package queues

import (
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

func TestView(t *testing.T) {
	for _, fx := range []string{"standalone", "ensemble3"} {
		for _, sz := range tuitest.Sizes {
			t.Run(fx+"_"+sz.Name, func(t *testing.T) {
				m := New(common.New(sz.Width, sz.Height))
				m.SetSize(sz.Width, sz.Height)
				snap := tuitest.Cluster(t, fx)
				for i := range snap.Queues {
					// A depth history, as a run of polls would record it.
					snap.Queues[i].Depths = []int{0, 2, 5, 9, 14, 12, 8, 7, 7, 3, 1, 0, 4, 7}
				}
				m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

// TestTakenItems: an item a consumer took and never consumed (kazoo
// LockingQueue) is shown, so a stuck consumer does not look idle.
func TestTakenItems(t *testing.T) {
	m := New(common.New(120, 30))
	m.SetSize(120, 30)
	snap := tuitest.Cluster(t, "standalone")
	if len(snap.Queues) == 0 {
		t.Fatal("the fixture has no queue")
	}
	q := &snap.Queues[0]
	q.Taken, q.TakenItem, q.TakenAge, q.TakenBy = 1, "entry-100-0000000000", 5*time.Minute, 0x100000942ff000c
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	want := "1 item taken by consumers, not yet consumed; oldest entry-100-0000000000, taken 5m00s ago by session 0x100000942ff000c"
	if got := tuitest.Plain(m.View()); !strings.Contains(got, want) {
		t.Errorf("view lacks %q:\n%s", want, got)
	}
}

// TestScanning: while the first walk of the tree runs (paced: minutes on a
// large tree), the queues listed are those found so far: the view says so,
// and no queue yet is not "no queue found".
func TestScanning(t *testing.T) {
	m := New(common.New(120, 30))
	m.SetSize(120, 30)
	snap := tuitest.Cluster(t, "standalone")
	snap.Queues, snap.Scanning = nil, true
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	if got := tuitest.Plain(m.View()); !strings.Contains(got, "scanning the tree for queues…") || strings.Contains(got, "no queue found") {
		t.Errorf("no queue found yet while scanning:\n%s", got)
	}
	snap = tuitest.Cluster(t, "standalone")
	if len(snap.Queues) == 0 {
		t.Fatal("the fixture has no queue")
	}
	snap.Scanning, snap.ScanRead = true, 1234
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	if got := tuitest.Plain(m.View()); !strings.Contains(got, "scanning the tree… 1,234 directories read so far") {
		t.Errorf("queues found so far, without a word that the walk still runs:\n%s", got)
	}
	snap.Scanning = false
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	if got := tuitest.Plain(m.View()); strings.Contains(got, "scanning") {
		t.Errorf("the walk has ended, the view still says scanning:\n%s", got)
	}
}

// TestLastRead: a still queue directory is read less often
// (inspect/still.go): the view says when it was last read.
func TestLastRead(t *testing.T) {
	m := New(common.New(120, 30))
	m.SetSize(120, 30)
	snap := tuitest.Cluster(t, "standalone")
	if len(snap.Queues) == 0 {
		t.Fatal("the fixture has no queue")
	}
	snap.Queues[0].ReadAt = snap.At.Add(-3 * time.Second)
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	got := tuitest.Plain(m.View())
	for _, want := range []string{"1 still: last read up to 3s ago", "· last read 3s ago"} {
		if !strings.Contains(got, want) {
			t.Errorf("a queue read 3 s before the snapshot: the screen lacks %q:\n%s", want, got)
		}
	}
}
