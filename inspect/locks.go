package inspect

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/zkherd/zkherd/recipes"
)

// DefaultHerdThreshold is how many sessions watching one node make a herd:
// a fair lock has exactly one watcher per node.
const DefaultHerdThreshold = 3

// nodeInfo is what the inspector knows about one child: its ephemeral owner
// (from Stat or dump) and creation time (from Stat, zero when not read).
type nodeInfo struct {
	Owner   int64
	Created time.Time
}

// dirKind says what a directory listing looks like.
type dirKind uint8

const (
	dirNone  dirKind = iota // nothing recognised
	dirLock                 // lock, read/write lock, semaphore, latch, election, herd
	dirQueue                // sequential items nobody waits on
)

// classify decides whether parsed children form a lock or a queue. A
// directory with any lock-like node is a lock; one whose nodes are all queue
// items or unnamed sequential nodes is a queue candidate (the caller checks
// that the items are persistent).
func classify(nodes []recipes.Node) dirKind {
	if len(nodes) == 0 {
		return dirNone
	}
	queue := true
	for _, n := range nodes {
		switch n.Kind {
		case recipes.KindQueueItem, recipes.KindOther:
		default:
			queue = false
		}
	}
	if queue {
		return dirQueue
	}
	return dirLock
}

// layoutName names a lock directory's layout for the user, e.g.
// "curator lock or election", "kazoo rwlock", "zkherd-herd".
func layoutName(nodes []recipes.Node) string {
	if len(nodes) == 0 {
		return ""
	}
	layout := nodes[0].Layout
	mixed := false
	kinds := map[recipes.Kind]bool{}
	for _, n := range nodes {
		if n.Layout != layout {
			mixed = true
		}
		kinds[n.Kind] = true
	}
	var kind string
	switch {
	case kinds[recipes.KindRead] || kinds[recipes.KindWrite]:
		kind = "rwlock"
	case kinds[recipes.KindLease]:
		kind = "semaphore"
	case kinds[recipes.KindLatch]:
		kind = "latch"
	case kinds[recipes.KindElection]:
		kind = "election"
	case layout == recipes.LayoutKazoo || layout == recipes.LayoutCurator || layout == recipes.LayoutSequential:
		// kazoo's Lock and Election, Curator's InterProcessMutex and
		// LeaderSelector (and zkherd's lock) write the same nodes.
		kind = "lock or election"
	default:
		kind = "mutex"
	}
	if layout == recipes.LayoutHerd {
		return string(layout)
	}
	if mixed {
		return "mixed " + kind
	}
	return string(layout) + " " + kind
}

// lockInput is everything buildLock reads.
type lockInput struct {
	Dir          string
	Nodes        []recipes.Node // sorted as recipes.ParseChildren returns them
	Unrecognised []string
	Info         func(name string) (nodeInfo, bool)
	Cluster      *Cluster
	At           time.Time
	// Listed is when the directory had been listed (zero: At); a node
	// first listed after the servers' watch lists were taken is newer
	// than them.
	Listed  time.Time
	HerdMin int
	// WaitingFor, when set, is the semaphore whose contenders wait in this
	// lock for a lease (foreign.go): its first contender holds nothing.
	WaitingFor string
	// Memory is what earlier polls saw (nil: judge this poll alone, every
	// node taken as older than it); Poll numbers this poll.
	Memory *watchMemory
	Poll   int
}

// buildLock draws the chain of one lock directory and flags its anomalies.
func buildLock(in lockInput) Lock {
	l := Lock{Path: in.Dir, Layout: layoutName(in.Nodes), Unrecognised: in.Unrecognised}
	if in.WaitingFor != "" && len(in.Nodes) > 0 {
		// The line of contenders for a lease of WaitingFor (a sibling or
		// the parent: the path says which).
		l.Layout = string(in.Nodes[0].Layout) + " semaphore queue"
	}
	herdMin := in.HerdMin
	if herdMin <= 0 {
		herdMin = DefaultHerdThreshold
	}
	c := in.Cluster
	if c == nil {
		c = &Cluster{}
	}

	// The owner of each node, when known, so that its own watch on it is
	// not counted as waiting.
	owners := make(map[string]int64, len(in.Nodes))
	for _, n := range in.Nodes {
		if info, ok := in.Info(n.Name); ok && info.Owner != 0 {
			owners[n.Name] = info.Owner
		} else if n.SessionID != 0 {
			owners[n.Name] = n.SessionID
		}
	}
	// Which nodes of this directory each session watches, and how many
	// sessions watch each node.
	watching := map[int64][]string{}
	watchers := make(map[string][]int64, len(in.Nodes))
	for _, n := range in.Nodes {
		ws := c.Watchers(path.Join(in.Dir, n.Name))
		if owner := owners[n.Name]; slices.Contains(ws, c.Self) || (owner != 0 && slices.Contains(ws, owner)) {
			ws = slices.DeleteFunc(slices.Clone(ws), func(s int64) bool { return s == c.Self || s == owner })
		}
		if len(ws) == 0 {
			continue
		}
		watchers[n.Name] = ws
		for _, s := range ws {
			watching[s] = append(watching[s], n.Name)
		}
	}

	l.Entries = make([]LockEntry, 0, len(in.Nodes))
	for i, n := range in.Nodes {
		e := LockEntry{Node: n.Name, Seq: n.Seq, Kind: string(n.Kind), Age: -1, Session: owners[n.Name]}
		if info, ok := in.Info(n.Name); ok && !info.Created.IsZero() {
			e.Age = max(in.At.Sub(info.Created), 0)
		}
		if s, ok := c.Session(e.Session); ok {
			e.Endpoint = s.Endpoint
		}
		// A contender watching its own node (to learn that it lost it, as
		// zkherd's recipes do) is not waiting on it.
		e.Watching = slices.DeleteFunc(slices.Clone(watching[e.Session]), func(w string) bool { return w == n.Name })
		switch {
		case n.Kind == recipes.KindLease:
			// The lease limit lives in the clients, not in ZooKeeper.
			e.Role = RoleUnknown
		case recipes.Holds(in.Nodes, i, 1) && in.WaitingFor != "":
			// Blocked on the semaphore's leases, not on a node here.
			e.Role = RoleWaiter
		case recipes.Holds(in.Nodes, i, 1):
			e.Role = RoleHolder
		default:
			e.Role = RoleWaiter
			e.Expect = in.Nodes[recipes.Predecessor(in.Nodes, i, 1)].Name
		}
		l.Entries = append(l.Entries, e)
	}
	if len(in.Nodes) == 1 && in.Nodes[0].Layout == recipes.LayoutHerd {
		l.Entries = append(l.Entries, herdWaiters(in.Nodes[0].Name, watchers[in.Nodes[0].Name], c)...)
	}

	judgeWatches(&l, in)
	if c.WatchesUnknown {
		// Without the servers' watch lists a waiter's watch cannot be
		// seen: it is unknown, not missing.
		l.WatchUnknown, l.WatchPending = true, c.WatchesPending
	} else {
		flagChildHerd(&l, in, herdMin)
		flagWaiters(&l, in.Nodes)
	}
	flagHerd(&l, watchers, herdMin)
	flagHolders(&l, c, in.At)
	if len(in.Unrecognised) > 0 {
		l.Anomalies = append(l.Anomalies, Anomaly{
			Kind:   AnomalyUnrecognised,
			Detail: fmt.Sprintf("%d children match no known layout, e.g. %q", len(in.Unrecognised), in.Unrecognised[0]),
		})
	}
	return l
}

// herdWaiters are the sessions watching a herd lock's single node: they
// have no node of their own.
func herdWaiters(node string, sessions []int64, c *Cluster) []LockEntry {
	es := make([]LockEntry, 0, len(sessions))
	for _, id := range sessions {
		e := LockEntry{Seq: -1, Kind: string(recipes.KindLock), Role: RoleWaiter, Session: id, Age: -1,
			Watching: []string{node}, Expect: node}
		if s, ok := c.Session(id); ok {
			e.Endpoint = s.Endpoint
		}
		es = append(es, e)
	}
	return es
}

// flagWaiters marks waiters that watch nothing or the wrong node, once
// their watch is judged missing (judgeWatches). A reader watching any writer
// before it is accepted: Curator's read lock watches the first writer
// rather than the nearest, which wakes readers too often but is not wrong.
func flagWaiters(l *Lock, nodes []recipes.Node) {
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		index[n.Name] = i
	}
	noWatch, wrong := 0, 0
	var firstNoWatch, firstNoWatchNode, firstWrong, firstWrongNode string
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.Role != RoleWaiter || e.Node == "" || e.Watch != WatchMissing {
			continue
		}
		switch {
		case len(e.Watching) == 0:
			e.Flags = e.Flags.With(AnomalyNoWatch)
			if noWatch == 0 {
				firstNoWatch, firstNoWatchNode = ShortName(e.Node), e.Node
			}
			noWatch++
		case !slices.Contains(e.Watching, e.Expect) && !(e.Kind == string(recipes.KindRead) && watchesEarlierWriter(e, nodes, index)):
			e.Flags = e.Flags.With(AnomalyWrongWatch)
			if wrong == 0 {
				firstWrongNode = e.Node
				firstWrong = fmt.Sprintf("%s watches %s, expected %s", ShortName(e.Node), ShortName(e.Watching[0]), ShortName(e.Expect))
			}
			wrong++
		}
	}
	if noWatch > 0 {
		l.Anomalies = append(l.Anomalies, Anomaly{Kind: AnomalyNoWatch, Node: firstNoWatchNode,
			Detail: fmt.Sprintf("%d waiter(s) watch no node of the lock, first %s (a child watch on the directory would not show: wchp lists data watches only)", noWatch, firstNoWatch)})
	}
	if wrong > 0 {
		l.Anomalies = append(l.Anomalies, Anomaly{Kind: AnomalyWrongWatch, Node: firstWrongNode,
			Detail: fmt.Sprintf("%d waiter(s) watch the wrong node: %s", wrong, firstWrong)})
	}
}

func watchesEarlierWriter(e *LockEntry, nodes []recipes.Node, index map[string]int) bool {
	self, ok := index[e.Node]
	if !ok {
		return false
	}
	for _, w := range e.Watching {
		if j, ok := index[w]; ok && j < self && nodes[j].Kind != recipes.KindRead {
			return true
		}
	}
	return false
}

// flagHerd marks nodes watched by herdMin sessions or more, and the entries
// of the sessions watching them. Readers waiting on the same writer are
// not a herd: the rule says they all wake together.
func flagHerd(l *Lock, watchers map[string][]int64, herdMin int) {
	kindOf := make(map[string]string, len(l.Entries))
	readers := map[int64]bool{}
	for _, e := range l.Entries {
		if e.Node != "" {
			kindOf[e.Node] = e.Kind
		}
		if e.Kind == string(recipes.KindRead) && e.Role == RoleWaiter {
			readers[e.Session] = true
		}
	}
	herd := map[int64]bool{}
	var names []string
	for name, ws := range watchers {
		n := 0
		for _, s := range ws {
			if !(readers[s] && kindOf[name] != string(recipes.KindRead)) {
				n++
			}
		}
		if n >= herdMin {
			names = append(names, name)
			for _, s := range ws {
				herd[s] = true
			}
		}
	}
	slices.Sort(names)
	for _, name := range names {
		l.Anomalies = append(l.Anomalies, Anomaly{Kind: AnomalyHerd, Node: name,
			Detail: fmt.Sprintf("%d sessions watch %s: its release wakes them all", len(watchers[name]), ShortName(name))})
	}
	if len(herd) == 0 {
		return
	}
	for i := range l.Entries {
		if e := &l.Entries[i]; e.Role == RoleWaiter && herd[e.Session] {
			e.Flags = e.Flags.With(AnomalyHerd)
		}
	}
}

// flagHolders marks holders whose session is connected to no member: the
// lock stays held until the session expires. Only judged when every member
// answered cons, and only for holders whose node is older than the oldest
// of those answers (Cluster.SessionsAt; at is when each entry's Age was
// measured): a session newer than the list is in none of it, and was
// judged gone while connected (the lists are minutes old while no view
// shows the sessions, Shown.Sessions).
//
// Assumes the servers' clocks (a node's creation time) and this machine's
// (when cons was answered) agree within holderClockSlack.
func flagHolders(l *Lock, c *Cluster, at time.Time) {
	if !c.SessionsComplete || c.SessionsAt.IsZero() {
		return
	}
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.Role != RoleHolder || e.Session == 0 || e.Age < 0 {
			continue
		}
		if created := at.Add(-e.Age); !created.Before(c.SessionsAt.Add(-holderClockSlack)) {
			continue // newer than the sessions list: not known either way
		}
		s, known := c.Session(e.Session)
		var detail string
		switch {
		case !known:
			detail = fmt.Sprintf("holder %s: session %s is unknown to the servers", ShortName(e.Node), SessionHex(e.Session))
		case s.Member == "":
			detail = fmt.Sprintf("holder %s: session %s is connected to no member; the lock stays held until it expires", ShortName(e.Node), SessionHex(e.Session))
			if s.Timeout > 0 {
				detail += fmt.Sprintf(" (timeout %s)", s.Timeout)
			}
		default:
			continue
		}
		e.Flags = e.Flags.With(AnomalyHolderGone)
		l.Anomalies = append(l.Anomalies, Anomaly{Kind: AnomalyHolderGone, Node: e.Node, Detail: detail})
	}
}

// holderClockSlack is how far the servers' clocks may be ahead of this
// machine's for flagHolders to judge a holder by its node's age.
const holderClockSlack = 2 * time.Second

// ShortName shortens a recipe node name to what tells contenders apart: the
// recipe part and the sequence ("lock-0000000042", "READ-0000000007"),
// dropping the per-attempt GUID. Other names are returned as they are.
func ShortName(name string) string {
	n, ok := recipes.ParseNode(name)
	if !ok || n.Seq < 0 {
		return name
	}
	seq := name[len(name)-recipes.SeqDigits:]
	switch n.Layout {
	case recipes.LayoutCurator, recipes.LayoutGoZookeeper, recipes.LayoutKazoo:
		part := n.Prefix[strings.Index(n.Prefix, n.GUID)+len(n.GUID):]
		return strings.Trim(part, "_-") + "-" + seq
	case recipes.LayoutZooKeeper:
		return "x-…-" + seq
	}
	return name
}
