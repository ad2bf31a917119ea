package load

import (
	"strings"
	"testing"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
	"github.com/zkherd/zkherd/tui/loadview"
)

func TestView(t *testing.T) {
	noBuckets := tuitest.HerdVsFair()
	for i := range noBuckets.Scenarios {
		for j := range noBuckets.Scenarios[i].Phases {
			noBuckets.Scenarios[i].Phases[j].Buckets = nil
		}
	}
	tests := []struct {
		name string
		snap *loadview.Snapshot
		keys []string
	}{
		{"herd_vs_fair", tuitest.HerdVsFair(), nil},
		{"herd_vs_fair_handoff", tuitest.HerdVsFair(), []string{"tab"}},
		{"percentiles_only", noBuckets, nil},
		{"queue", tuitest.Queue(), nil},
		{"empty", &loadview.Snapshot{Title: "fair-lock"}, nil},
	}
	for _, tt := range tests {
		for _, sz := range tuitest.Sizes {
			t.Run(tt.name+"_"+sz.Name, func(t *testing.T) {
				m := New(common.New(sz.Width, sz.Height))
				m.SetSize(sz.Width, sz.Height)
				m, _ = m.Update(common.LoadMsg{Snapshot: tt.snap})
				for _, k := range tt.keys {
					m, _ = m.Update(tuitest.Key(k))
				}
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

func TestFaultMarked(t *testing.T) {
	m := New(common.New(120, 40))
	m, _ = m.Update(common.LoadMsg{Snapshot: tuitest.HerdVsFair()})
	got := tuitest.Plain(m.View())
	if !strings.Contains(got, "0:42 killed member 2 (leader)") {
		t.Errorf("fault not listed:\n%s", got)
	}
	if strings.Count(got, "▲") < 2 {
		t.Errorf("fault not marked under the throughput sparkline:\n%s", got)
	}
}
