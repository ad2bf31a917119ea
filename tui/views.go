package tui

import (
	"context"
	"slices"

	"github.com/zkherd/zkherd/tui/bookmarks"
	"github.com/zkherd/zkherd/tui/common"
	bookmarksview "github.com/zkherd/zkherd/tui/views/bookmarks"
	"github.com/zkherd/zkherd/tui/views/load"
	"github.com/zkherd/zkherd/tui/views/locks"
	"github.com/zkherd/zkherd/tui/views/queues"
	"github.com/zkherd/zkherd/tui/views/search"
	"github.com/zkherd/zkherd/tui/views/servers"
	"github.com/zkherd/zkherd/tui/views/sessions"
	"github.com/zkherd/zkherd/tui/views/tree"
)

// viewID names a view.
type viewID int

const (
	viewTree viewID = iota
	viewLocks
	viewQueues
	viewSessions
	viewServers
	viewLoad
	viewSearch
	viewBookmarks
)

// viewEnv is what a view may need to be built.
type viewEnv struct {
	ctx    context.Context
	common common.Common
	tree   tree.Source // nil when there is no ensemble to browse
	search search.Source
	// bookmarks are the user's, shared by the Tree and Bookmarks views.
	bookmarks *bookmarks.Store
}

// viewSpec registers a view: its id, the names ":" accepts (the first is
// its own), how to build it, and its tab in each screen: inspect is its
// place among zkherd inspect's tabs, load among the cluster tabs beside
// the load dashboard (after the dashboard's own); 0 leaves it out.
type viewSpec struct {
	id            viewID
	names         []string
	build         func(viewEnv) common.Component
	inspect, load int
}

// views is every view a screen can show. A new view is one package under
// tui/views and one line here.
var views = []viewSpec{
	{viewTree, []string{"tree"}, newTree, 1, 4},
	{viewLocks, []string{"locks"}, func(e viewEnv) common.Component { return common.AsComponent(locks.New(e.common)) }, 2, 1},
	{viewQueues, []string{"queues"}, func(e viewEnv) common.Component { return common.AsComponent(queues.New(e.common)) }, 3, 5},
	{viewSessions, []string{"sessions", "watches"}, func(e viewEnv) common.Component { return common.AsComponent(sessions.New(e.common)) }, 4, 2},
	{viewServers, []string{"servers"}, func(e viewEnv) common.Component { return common.AsComponent(servers.New(e.common)) }, 5, 3},
	{viewLoad, []string{"load"}, func(e viewEnv) common.Component { return common.AsComponent(load.New(e.common)) }, 0, 0},
	{viewSearch, []string{"search", "find", "grep"}, func(e viewEnv) common.Component { return common.AsComponent(search.New(e.ctx, e.common, e.search)) }, 6, 6},
	{viewBookmarks, []string{"bookmarks", "marks"}, func(e viewEnv) common.Component { return common.AsComponent(bookmarksview.New(e.common, e.bookmarks)) }, 7, 7},
}

// tabs lists the views whose place pos gives (inspect or load), in order.
func tabs(pos func(viewSpec) int) []viewID {
	var shown []viewSpec
	for _, s := range views {
		if pos(s) > 0 {
			shown = append(shown, s)
		}
	}
	slices.SortStableFunc(shown, func(a, b viewSpec) int { return pos(a) - pos(b) })
	ids := make([]viewID, len(shown))
	for i, s := range shown {
		ids[i] = s.id
	}
	return ids
}

// newTree builds the Tree, which reads the ensemble and adds bookmarks.
func newTree(e viewEnv) common.Component {
	return common.AsComponent(tree.New(e.ctx, e.common, e.tree).WithBookmarks(e.bookmarks))
}

// specOf is the registration of id.
func specOf(id viewID) (viewSpec, bool) {
	for _, s := range views {
		if s.id == id {
			return s, true
		}
	}
	return viewSpec{}, false
}

// viewNamed is the view a ":" name selects.
func viewNamed(name string) (viewID, bool) {
	for _, s := range views {
		for _, n := range s.names {
			if n == name {
				return s.id, true
			}
		}
	}
	return 0, false
}
