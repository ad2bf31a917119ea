package queues

import (
	"testing"

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
