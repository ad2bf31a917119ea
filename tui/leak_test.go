package tui

import (
	"context"
	"runtime"
	"testing"
	"weak"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
	"github.com/zkherd/zkherd/tui/views/tree"
)

// TestOldSnapshotsAreCollectable feeds the inspector many snapshots, drawing
// every view and moving the cursors in between as a user would, and checks
// that the snapshots it no longer shows can be collected. A row function
// that captures a view's model copy keeps that copy's table, whose previous
// row function holds the previous copy, and so on: every snapshot ever
// received stays reachable (the inspector grew 5-8 MB a second on a large
// ensemble).
func TestOldSnapshotsAreCollectable(t *testing.T) {
	const n = 40
	var tm tea.Model = newModel(context.Background(), common.New(120, 40), nil, inspectViews, feeds{}, "test")
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	ptrs := make([]weak.Pointer[inspect.Snapshot], 0, n)
	for range n {
		snap := tuitest.Cluster(t, "ensemble3") // a fresh copy each time
		ptrs = append(ptrs, weak.Make(snap))
		tm, _ = tm.Update(common.SnapshotMsg{Snapshot: snap})
		// A listing in the tree (its rows are set again on every listing).
		tm, _ = tm.Update(tree.ChildrenMsg{Path: "/", Children: inspect.Children{Path: "/", Names: []string{"a", "b", "c"}}})
		for _, k := range []string{"1", "j", "2", "j", "tab", "j", "3", "4", "j", "tab", "j", "5"} {
			tm, _ = tm.Update(tuitest.Key(k))
			_ = tm.View()
		}
	}
	runtime.GC()
	runtime.GC()
	live := 0
	for _, p := range ptrs[:n-2] { // the newest ones may be shown
		if p.Value() != nil {
			live++
		}
	}
	runtime.KeepAlive(tm)
	if live > 0 {
		t.Errorf("%d of the %d snapshots no longer shown are still reachable, want 0", live, n-2)
	}
}
