package inspect

import (
	"context"
	"path"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
)

// The inspector sets no watch on what the user looks at. A watch it set
// would be listed by wchp beside the clients' own, and a colleague's
// inspector would count it: one waiter and two people looking at its
// lock made a "3 sessions watch lock-0000000000" herd (issue 26). Instead
// the nodes and listings last read (at most maxFollowed) are re-checked
// with one exists each per snapshot, and a difference in their stat
// becomes a Change, as a watch event would have, a poll interval later.
//
// The only watch an inspector holds is an exists watch on a node that
// does not exist, InspectorMarker under the chroot: wchp then lists every
// inspector session there, so that each inspector recognises the others
// (of any chroot) and counts none of them as a client (dropInspectors).
// Cost: one watch per inspector, no write, no node created.

// InspectorMarker is the name whose exists watch marks a zkherd inspector
// session.
const InspectorMarker = ".zkherd-inspector"

// maxFollowed bounds the paths re-checked per snapshot: the node and
// listing on screen and a few the user just left.
const maxFollowed = 8

// followed is one path whose changes are reported.
type followed struct {
	abs      string
	data     bool // a Node read: report data changes and deletion
	children bool // a listing: report child changes
	exists   bool
	stat     zk.Stat
}

// follow records that p (absolute) was just read with stat (nil: absent),
// newest first, forgetting the oldest beyond maxFollowed.
func (in *Inspector) follow(abs string, stat *zk.Stat, data, children bool) {
	in.watchMu.Lock()
	defer in.watchMu.Unlock()
	f := followed{abs: abs}
	if i := slices.IndexFunc(in.followed, func(f followed) bool { return f.abs == abs }); i >= 0 {
		f = in.followed[i]
		in.followed = slices.Delete(in.followed, i, i+1)
	}
	f.data, f.children = f.data || data, f.children || children
	f.exists = stat != nil
	if stat != nil {
		f.stat = *stat
	}
	in.followed = slices.Insert(in.followed, 0, f)
	if len(in.followed) > maxFollowed {
		in.followed = in.followed[:maxFollowed]
	}
}

// checkFollowed stats every followed path (pipelined) and records what
// changed since it was read as pending Changes. It returns the requests
// sent. Called with scanMu held. Early snapshots (Run), four a poll
// interval, check once a poll interval, as a steady poll does (issue 26,
// finding 9: no start costs more than the steady polling).
func (in *Inspector) checkFollowed(ctx context.Context, c *zk.Conn, early bool) int {
	now := time.Now()
	switch since := now.Sub(in.followChecked); {
	case !in.showing().Tree && since < in.stillCap():
		return 0
	case early && since < in.pollInterval():
		return 0
	}
	in.followChecked = now
	in.watchMu.Lock()
	paths := make([]string, len(in.followed))
	for i, f := range in.followed {
		paths[i] = f.abs
	}
	in.watchMu.Unlock()
	if len(paths) == 0 {
		return 0
	}
	type res struct {
		path string
		ok   bool
		stat *zk.Stat
		err  error
	}
	got := pipelined(ctx, paths, func(p string) res {
		ok, stat, err := c.Exists(p)
		return res{p, ok, stat, err}
	})
	in.watchMu.Lock()
	signal := false
	for _, r := range got {
		p := r.path
		if r.err != nil {
			continue // unknown: ask again next time
		}
		j := slices.IndexFunc(in.followed, func(f followed) bool { return f.abs == p })
		if j < 0 {
			continue
		}
		f := &in.followed[j]
		kind := changeBetween(*f, r.ok, r.stat)
		f.exists = r.ok
		if r.ok {
			f.stat = *r.stat
		}
		if kind == 0 {
			continue
		}
		if rel, ok := in.rel(p); ok {
			in.pending[rel] |= kind
			signal = true
		}
	}
	in.watchMu.Unlock()
	if signal {
		select {
		case in.notify <- struct{}{}:
		default:
		}
	}
	return len(paths)
}

// changeBetween is what a watch would have reported between the stat read
// before (f) and now.
func changeBetween(f followed, exists bool, now *zk.Stat) ChangeKind {
	switch {
	case f.exists && !exists:
		return ChangedDeleted
	case !f.exists && exists:
		return ChangedCreated
	case !exists:
		return 0
	}
	var k ChangeKind
	if now.Czxid != f.stat.Czxid {
		// Deleted and created again between two checks.
		return ChangedDeleted | ChangedCreated
	}
	if f.data && now.Mzxid != f.stat.Mzxid {
		k |= ChangedData
	}
	if f.children && (now.Pzxid != f.stat.Pzxid || now.Cversion != f.stat.Cversion) {
		k |= ChangedChildren
	}
	return k
}

// markSession arms the inspector marker's exists watch on a new session
// (and again after it fired). Called with no lock held.
func (in *Inspector) markSession(ctx context.Context, c *zk.Conn) {
	in.watchMu.Lock()
	armed := in.markerArmed == c
	in.watchMu.Unlock()
	if armed {
		return
	}
	_, err := call(ctx, func() (bool, error) {
		_, _, _, err := c.ExistsW(in.abs("/" + InspectorMarker))
		return true, err
	})
	if err == nil {
		in.watchMu.Lock()
		in.markerArmed = c
		in.watchMu.Unlock()
	}
}

// isMarker reports whether an absolute path is an inspector marker (of
// any chroot).
func isMarker(p string) bool { return path.Base(p) == InspectorMarker }

// dropInspectors finds the inspector sessions (the marker's watchers and
// Self) and removes them and the marker from the watch lists, so that no
// herd, waiter or watch count includes an inspector.
func dropInspectors(c *Cluster) {
	inspectors := map[int64]bool{}
	if c.Self != 0 {
		inspectors[c.Self] = true
	}
	for _, w := range c.Watches {
		if isMarker(w.Path) {
			for _, s := range w.Sessions {
				inspectors[s] = true
			}
		}
	}
	if len(inspectors) == 0 {
		return
	}
	c.Inspectors = c.Inspectors[:0]
	for s := range inspectors {
		c.Inspectors = append(c.Inspectors, s)
	}
	slices.Sort(c.Inspectors)
	c.Watches = slices.DeleteFunc(c.Watches, func(w PathWatch) bool { return isMarker(w.Path) })
	for i := range c.Watches {
		w := &c.Watches[i]
		if slices.ContainsFunc(w.Sessions, func(s int64) bool { return inspectors[s] }) {
			w.Sessions = slices.DeleteFunc(slices.Clone(w.Sessions), func(s int64) bool { return inspectors[s] })
		}
	}
	c.Watches = slices.DeleteFunc(c.Watches, func(w PathWatch) bool { return len(w.Sessions) == 0 })
	for i := range c.Sessions {
		s := &c.Sessions[i]
		if inspectors[s.ID] {
			s.Inspector = true
			s.Watches = slices.DeleteFunc(slices.Clone(s.Watches), isMarker)
		}
	}
}
