package sessions

import (
	"strings"
	"testing"

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
