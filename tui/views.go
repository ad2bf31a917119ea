package tui

import (
	"context"

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
// its own), and how to build it.
type viewSpec struct {
	id    viewID
	names []string
	build func(viewEnv) common.Component
}

// views is every view a screen can show. A new view is one package under
// tui/views and one line here.
var views = []viewSpec{
	{viewTree, []string{"tree"}, newTree},
	{viewLocks, []string{"locks"}, func(e viewEnv) common.Component { return common.AsComponent(locks.New(e.common)) }},
	{viewQueues, []string{"queues"}, func(e viewEnv) common.Component { return common.AsComponent(queues.New(e.common)) }},
	{viewSessions, []string{"sessions", "watches"}, func(e viewEnv) common.Component { return common.AsComponent(sessions.New(e.common)) }},
	{viewServers, []string{"servers"}, func(e viewEnv) common.Component { return common.AsComponent(servers.New(e.common)) }},
	{viewLoad, []string{"load"}, func(e viewEnv) common.Component { return common.AsComponent(load.New(e.common)) }},
	{viewSearch, []string{"search", "find", "grep"}, func(e viewEnv) common.Component { return common.AsComponent(search.New(e.ctx, e.common, e.search)) }},
	{viewBookmarks, []string{"bookmarks", "marks"}, func(e viewEnv) common.Component { return common.AsComponent(bookmarksview.New(e.common, e.bookmarks)) }},
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
