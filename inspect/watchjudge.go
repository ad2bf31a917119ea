package inspect

import (
	"fmt"
	"path"
	"slices"
	"time"
)

// Judging a waiter's watch under churn. The servers list watches (wchp)
// and the tree is listed at different moments, and under load a waiter
// lives for less than a second, so one poll can never say that a watch is
// missing. The inspector remembers, per lock directory, at which poll each
// node was first listed and when the servers last confirmed each waiter's
// expected watch. A waiter is judged only when its node was listed by an
// earlier poll: until then its watch is "expected". A watch once confirmed
// stays confirmed (a watch is only removed by firing, which changes the
// node the waiter expects, or with its session), with the age of the
// confirmation. confirmAnomalies then reports a missing watch only when
// two polls in a row find it missing: two polls taken after the node
// appeared.

// WatchState is what the inspector knows of a waiter's watch.
type WatchState uint8

const (
	// WatchNone: not a waiter, or nothing to judge (a herd waiter).
	WatchNone WatchState = iota
	// WatchExpected: the node is newer than the servers' watch lists; the
	// waiter should be watching Expect.
	WatchExpected
	// WatchConfirmed: the servers listed the session's watch on Expect.
	WatchConfirmed
	// WatchMissing: an earlier poll listed the node, and no poll since
	// listed the expected watch.
	WatchMissing
	// WatchChild: the waiter waits on a child watch of the directory, which
	// the servers count but never list (the herd-children layout).
	WatchChild
)

// lockMemory is what the inspector remembers of one lock directory
// between polls.
type lockMemory struct {
	poll      int
	firstSeen map[string]int         // node name -> poll that first listed it
	firstAt   map[string]time.Time   // node name -> when a poll first listed it (with or without watch lists)
	confirmed map[watchKey]time.Time // when the servers last listed a waiter's watch
	// waiting is when each session was first listed waiting in the lock,
	// kept while every poll since lists it as a contender (flagChildHerd).
	waiting map[int64]time.Time
}

type watchKey struct {
	session int64
	node    string
}

// watchMemory is lockMemory by directory. It belongs to the scan state:
// one snapshot at a time.
type watchMemory struct {
	dirs map[string]*lockMemory
}

// forget drops the directories not read at poll (gone or no longer locks).
func (w *watchMemory) forget(poll int) {
	for dir, m := range w.dirs {
		if m.poll < poll-1 {
			delete(w.dirs, dir)
		}
	}
}

// judgeWatches sets each waiter's WatchState and confirmation age from the
// current poll and what in.Memory remembers, and remembers this poll.
// Without a memory the poll is judged alone, as if every node were older
// than it (tests of the rules).
func judgeWatches(l *Lock, in lockInput) {
	c := in.Cluster
	confirmedAt := c.At
	if confirmedAt.IsZero() {
		confirmedAt = in.At
	}
	var prev *lockMemory
	next := &lockMemory{poll: in.Poll, firstSeen: make(map[string]int, len(l.Entries)),
		firstAt: make(map[string]time.Time, len(l.Entries)), confirmed: map[watchKey]time.Time{},
		waiting: make(map[int64]time.Time, len(l.Entries))}
	listed := in.Listed
	if listed.IsZero() {
		listed = in.At
	}
	if in.Memory != nil {
		if in.Memory.dirs == nil {
			in.Memory.dirs = map[string]*lockMemory{}
		}
		prev = in.Memory.dirs[in.Dir]
		in.Memory.dirs[in.Dir] = next
	}
	for _, e := range l.Entries {
		if e.Session == 0 || (e.Role != RoleWaiter && e.Role != RoleHolder) {
			continue
		}
		since := listed
		if t, ok := prev.waitingSince(e.Session); ok {
			since = t
		}
		if e.Role == RoleWaiter || !since.Equal(listed) {
			next.waiting[e.Session] = since
		}
	}
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.Role != RoleWaiter || e.Node == "" || e.Expect == "" {
			continue
		}
		first, known := in.Poll, false
		firstAt := listed
		if prev != nil {
			first, known = prev.firstSeen[e.Node]
			if !known {
				first = in.Poll
			}
			if t, ok := prev.firstAt[e.Node]; ok {
				firstAt = t
			}
		}
		next.firstAt[e.Node] = firstAt
		// A poll without the servers' watch lists is not one "after
		// the node appeared": the node counts from the next one.
		if known || !c.WatchesUnknown {
			next.firstSeen[e.Node] = first
		}
		// Nor is one whose watch lists were taken before the node was
		// listed (a list is reused until it is due again): the node is
		// newer than them.
		listsAt := c.ListsAt(e.Session)
		newer := !listsAt.IsZero() && !firstAt.Before(listsAt)
		key := watchKey{e.Session, e.Expect}
		var at time.Time
		switch {
		case slices.Contains(e.Watching, e.Expect):
			at = confirmedAt
		case prev != nil:
			at = prev.confirmed[key]
		}
		switch {
		case !at.IsZero():
			next.confirmed[key] = at
			e.Watch, e.Confirmed = WatchConfirmed, max(in.At.Sub(at), 0)
		case in.Memory != nil && (first == in.Poll || newer):
			e.Watch = WatchExpected
		default:
			e.Watch = WatchMissing
		}
	}
}

// waitingSince is when session id was first listed waiting in the lock
// (m may be nil).
func (m *lockMemory) waitingSince(id int64) (time.Time, bool) {
	if m == nil {
		return time.Time{}, false
	}
	t, ok := m.waiting[id]
	return t, ok
}

// flagChildHerd recognises waiters that wait on a child watch of the
// directory (the herd-children layout, every waiter woken by every change):
// the servers confirm none of the expected data watches, no waiter has any
// data watch on the lock, and the servers count at least that many child
// watches that they do not itemise. Those waiters are a herd, not waiters
// with a missing watch. Only waiters older than the watch lists count: a
// waiter newer than them (WatchExpected) may well watch its predecessor,
// and the unlisted child watches may be the waiters' watches on their own
// nodes, so a lock whose waiters are all newer than the lists is no herd.
func flagChildHerd(l *Lock, in lockInput, herdMin int) {
	c := in.Cluster
	if c == nil {
		return
	}
	var mem *lockMemory
	if in.Memory != nil {
		mem = in.Memory.dirs[in.Dir]
	}
	n := 0
	for _, e := range l.Entries {
		if e.Role != RoleWaiter || e.Node == "" {
			continue
		}
		if len(e.Watching) > 0 || e.Watch == WatchConfirmed {
			return
		}
		judged, watched := sessionWatch(c, mem, in.Dir, e)
		if judged && watched {
			// Its session watched a node of the lock when the list was
			// taken: a fair lock's waiter between two watches.
			return
		}
		if e.Watch != WatchExpected || c.WatchesAt.IsZero() || judged {
			n++
		}
	}
	child, ok := c.ChildWatches()
	if n < herdMin || !ok || child < int64(n)/2 {
		return
	}
	for i := range l.Entries {
		if e := &l.Entries[i]; e.Role == RoleWaiter && e.Node != "" {
			e.Watch = WatchChild
			e.Flags = e.Flags.With(AnomalyHerd)
		}
	}
	l.Anomalies = append(l.Anomalies, Anomaly{Kind: AnomalyHerd,
		Detail: fmt.Sprintf("%d sessions wait on a child watch of %s (the servers count %d child watches but do not list them): every release wakes them all",
			n, path.Base(in.Dir), child)})
}

// sessionWatch judges waiter e by its session: judged is set when the
// session was already listed waiting in the lock when its member's watch
// list was taken, and watched when that list shows it watching a node of
// the lock (gone ones included) other than its own. A herd's waiter lives
// a few seconds, and while the servers are busy snapshots are up to 16 s
// apart (every node is on its first snapshot, newer than the lists), but
// its session queues again and again: judged sessions that watch nothing
// in the lock wait on something the lists do not show (a child watch),
// and one that does is a fair lock's waiter (flagChildHerd).
func sessionWatch(c *Cluster, mem *lockMemory, dir string, e LockEntry) (judged, watched bool) {
	since, ok := mem.waitingSince(e.Session)
	listsAt := c.ListsAt(e.Session)
	if !ok || listsAt.IsZero() || !since.Before(listsAt) {
		return false, false
	}
	s, ok := c.Session(e.Session)
	if !ok {
		return false, false
	}
	for _, w := range s.Watches {
		if d, name := path.Split(w); path.Clean(d) == dir && name != e.Node {
			return true, true
		}
	}
	return true, false
}
