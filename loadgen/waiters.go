package loadgen

import (
	"cmp"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/metrics"
)

// Who waits on whom, from the generator's own exact knowledge of its
// clients (no polling of the servers): the hold loop says which clients
// are acquiring and which hold; each client's wire tap sees the node its
// create made and the path its watch request named, and the notification
// that fired it. Every lock recipe, including ones written by others
// (Options.NewLocker), is seen the same way.

// WaitGraph is one lock as its clients see it.
type WaitGraph struct {
	// At is when the graph was taken.
	At time.Time
	// Path is the lock's directory (the first lock of the run).
	Path string
	// Locks is how many locks the run has (the graph shows the first).
	Locks int
	// Holders are the clients holding it (one, unless a check fails).
	Holders []Contender
	// Waiters are the first waiters in queue order (by their node's
	// sequence; by when they started waiting for the herd locks, whose
	// waiters have no node), at most MaxWaitersShown.
	Waiters []Contender
	// WaitersTotal counts every client of the lock acquiring it.
	WaitersTotal int
	// Fan counts waiters by the path they watch, most watched first, at
	// most maxFan paths: one waiter per node in a fair lock; everybody on
	// one node (herd-lock) or directory (herd-children) in a herd.
	Fan []WatchCount
	// WokePerRelease is watch notifications delivered to waiting clients
	// per release during the last interval (see figures.WakeupsPerRelease):
	// 1 when a release wakes its successor only, about WaitersTotal when
	// it wakes the whole herd.
	WokePerRelease float64
	// Releases counts releases during the last interval.
	Releases int64
}

// Contender is one client of a lock.
type Contender struct {
	Client int
	// Node is the client's node for this acquisition ("" before its
	// create returned, and for a herd lock's waiters, who have none).
	Node string
	// Watching is the path the client's pending watch is on, with a
	// trailing "/" for a child watch; "" when it has none.
	Watching string
	// For is how long it has held or waited; WatchFor how long its watch
	// has been set.
	For, WatchFor time.Duration
}

// WatchCount is how many waiters watch one path.
type WatchCount struct {
	Path    string `json:"path"`
	Waiters int    `json:"waiters"`
}

// MaxWaitersShown bounds WaitGraph.Waiters: a screen shows a handful, and
// a graph of 10,000 waiters sent every second would cost for nothing.
const MaxWaitersShown = 32

// maxFan bounds WaitGraph.Fan.
const maxFan = 4

// activity is what a client is doing in the hold loop.
type activity uint8

const (
	idle activity = iota
	acquiring
	holding
)

// seen is one client's state: written by its hold loop and its wire tap,
// read once per interval by the graph. The tap's writes happen once per
// request, so the lock is as cheap as it is uncontended.
type seen struct {
	mu         sync.Mutex
	doing      activity
	since      time.Time
	node       string // full path of the node created in this acquisition
	watching   string // the pending watch's key (dir + "/" for children)
	watchSince time.Time
	tracked    bool // begin was called: the client acquires locks
	// turn counts changes of doing: a holder read twice with the same
	// turn held the lock all the time between (lockGraph).
	turn uint64
}

// begin, hold, releasing and rest are called by the hold loop.
func (s *seen) begin(at time.Time) {
	s.mu.Lock()
	s.tracked = true
	s.doing, s.since, s.node, s.watching = acquiring, at, "", ""
	s.turn++
	s.mu.Unlock()
}

func (s *seen) hold(at time.Time) {
	s.mu.Lock()
	s.doing, s.since, s.watching = holding, at, ""
	s.turn++
	s.mu.Unlock()
}

// releasing: the release is under way. The successor may be granted
// before it returns (as soon as the node goes), so the client is no
// longer drawn as the holder.
func (s *seen) releasing() {
	s.mu.Lock()
	s.doing, s.watching = idle, ""
	s.turn++
	s.mu.Unlock()
}

func (s *seen) rest() {
	s.mu.Lock()
	s.doing, s.node, s.watching = idle, "", ""
	s.turn++
	s.mu.Unlock()
}

// created, deleted, watch and fired are called by the wire tap.
func (s *seen) created(p string) {
	s.mu.Lock()
	if s.doing == acquiring {
		s.node = p
	}
	s.mu.Unlock()
}

func (s *seen) deleted(p string) {
	s.mu.Lock()
	// A holder's release keeps showing its node until the release returns.
	if s.doing == acquiring && s.node == p {
		s.node = ""
	}
	s.mu.Unlock()
}

func (s *seen) watch(key string, at time.Time) {
	s.mu.Lock()
	// A watch on its own node, data or children (to learn that it lost
	// it), is not what it waits on.
	if s.doing == acquiring && s.watching != key && key != s.node && key != s.node+"/" {
		s.watching, s.watchSince = key, at
	}
	s.mu.Unlock()
}

// fired notes a notification for key and says whether it woke a waiter:
// a client acquiring, about another node than its own. A holder's
// notification about its own node (the watch that tells it when someone
// else deleted its node, which its own release fires too) and one that
// reaches a client between acquisitions are no wake-ups. Clients whose
// workload is not a lock (no acquisition ever began) count every one.
func (s *seen) fired(key string) (woke bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching == key {
		s.watching = ""
	}
	if !s.tracked {
		return true
	}
	own := s.node != "" && (key == s.node || key == s.node+"/")
	return s.doing == acquiring && !own
}

// graphState is what the wait graph keeps from one graph to the next: the
// counters of the previous graph, for the per-interval wake-ups per
// release, and the fan's counts, a map cleared and reused so that a graph
// of 10,000 waiters on as many nodes allocates no map of them.
type graphState struct {
	mu            sync.Mutex
	wakeups, rels int64
	fan           map[string]int
}

// queued is a waiter or holder, its node's sequence, parsed once per
// graph, and the times its ages are taken from once the scan is over.
type queued struct {
	Contender
	seq               int64
	since, watchSince time.Time
	seen              *seen  // the client's state, for holdersStill
	turn              uint64 // seen.turn when scanned
}

// queuedBefore orders waiters: queue order, then the longest waiting first.
func queuedBefore(a, b queued) bool {
	return a.seq < b.seq || (a.seq == b.seq && a.since.Before(b.since))
}

// aged is q with its ages at now.
func (q queued) aged(now time.Time) Contender {
	c := q.Contender
	c.For = now.Sub(q.since)
	if c.Watching != "" {
		c.WatchFor = now.Sub(q.watchSince)
	}
	return c
}

// fanBefore orders watched paths: most watched first, then by path.
func fanBefore(a, b WatchCount) bool {
	return a.Waiters > b.Waiters || (a.Waiters == b.Waiters && a.Path < b.Path)
}

// keepFirst inserts v among the n entries kept in order (by before) at
// the start of kept, whose last slot is only room for the shift, and
// returns how many are kept now: at most len(kept)-1, the first ones. Of
// tied entries the one inserted first stays first.
func keepFirst[T any](kept []T, n int, v T, before func(a, b T) bool) int {
	limit := len(kept) - 1
	if n == limit && !before(v, kept[n-1]) {
		return n
	}
	i := n
	for i > 0 && before(v, kept[i-1]) {
		kept[i] = kept[i-1]
		i--
	}
	kept[i] = v
	return min(n+1, limit)
}

// lockGraph is the wait graph of the run's first lock; nil for recipes
// that are not locks. One pass over the clients, each client's lock held
// only to copy its state: the first MaxWaitersShown waiters and the maxFan
// most watched paths are kept in order as the clients are scanned (most
// fail the comparison with the last kept), so with 10,000 waiters there is
// no slice of them all and no sort of it.
//
// The graph's time is read from clock after the scan, so that every state
// seen (each stamped with a time read before it was stored) is older than
// it: read before, a holder granted between that read and its scan would
// be drawn with a negative age.
func (r *runner) lockGraph(clock func() time.Time) *WaitGraph {
	w, ok := r.work.(*lockWork)
	if !ok || len(w.paths) == 0 {
		return nil
	}
	g := &WaitGraph{Path: w.paths[0], Locks: len(w.paths)}
	w.graph.mu.Lock()
	defer w.graph.mu.Unlock()
	if w.graph.fan == nil {
		w.graph.fan = map[string]int{}
	}
	fan := w.graph.fan
	clear(fan)
	var (
		waiters [MaxWaitersShown + 1]queued
		shown   int
		wakeups int64
		holders []queued
	)
	for _, c := range r.clients {
		wakeups += c.wakeups()
		if c.slot != 0 || c.tap == nil {
			continue
		}
		s := &c.tap.seen
		s.mu.Lock()
		doing, since, node, watching, watchSince, turn := s.doing, s.since, s.node, s.watching, s.watchSince, s.turn
		s.mu.Unlock()
		ct := queued{Contender: Contender{Client: c.idx, Node: node, Watching: watching}, since: since, watchSince: watchSince, seen: s, turn: turn}
		switch doing {
		case holding:
			holders = append(holders, ct)
		case acquiring:
			g.WaitersTotal++
			if watching != "" {
				fan[watching]++
			}
			if node == "" && watching == "" {
				continue
			}
			q := ct
			q.seq = 1 << 62 // no node yet: after those queued
			if node != "" {
				q.seq = seqOf(node)
			}
			shown = keepFirst(waiters[:], shown, q, queuedBefore)
		}
	}
	g.At = clock()
	for _, q := range holdersStill(holders) {
		g.Holders = append(g.Holders, q.aged(g.At))
	}
	g.Waiters = make([]Contender, shown)
	for i, q := range waiters[:shown] {
		g.Waiters[i] = q.aged(g.At)
	}

	var top [maxFan + 1]WatchCount
	n := 0
	for p, k := range fan {
		n = keepFirst(top[:], n, WatchCount{Path: p, Waiters: k}, fanBefore)
	}
	if n > 0 {
		g.Fan = slices.Clone(top[:n])
	}

	rels := r.counts.Get(figures.Releases)
	dw, dr := wakeups-w.graph.wakeups, rels-w.graph.rels
	w.graph.wakeups, w.graph.rels = wakeups, rels
	g.Releases = dr
	if dr > 0 {
		g.WokePerRelease = float64(dw) / float64(dr)
	}
	return g
}

// holdersStill keeps, of several holders found by one scan of the
// clients, those still holding the same grant once the scan is over. The
// scan reads one client at a time: a holder read early may release, and
// its successor be granted and read, before the scan ends, and both would
// be drawn as holders of a lock that never had two ("+1 more holders!").
// A holder read again after the scan with the same turn held the grant
// from its first read until then, past the moment every other holder was
// read: two such holders did hold at once, and both are kept. When none
// holds still, the one granted last stands for the lock as it was read.
func holdersStill(holders []queued) []queued {
	if len(holders) < 2 {
		return holders
	}
	latest := holders[0]
	for _, q := range holders[1:] {
		if q.since.After(latest.since) {
			latest = q
		}
	}
	still := slices.DeleteFunc(slices.Clone(holders), func(q queued) bool {
		q.seen.mu.Lock()
		defer q.seen.mu.Unlock()
		return q.seen.doing != holding || q.seen.turn != q.turn
	})
	if len(still) == 0 {
		// All moved on since: the last granted was the holder when read.
		still = append(still, latest)
	}
	return still
}

// IsHerd reports whether the graph is a herd: the most watched path has
// several waiters, or a release woke many.
func (g *WaitGraph) IsHerd() bool {
	return (len(g.Fan) > 0 && g.Fan[0].Waiters > 1) || g.WokePerRelease >= HerdWakeups
}

// HerdWakeups is how many waiters a release wakes, at least, in a herd.
const HerdWakeups = 3

// ShortPath names p relative to the lock's directory dir: "lock-000/x" is
// "x", a child watch on dir itself "children of lock-000".
func (g *WaitGraph) ShortPath(p string) string {
	switch {
	case p == "":
		return ""
	case p == g.Path+"/":
		return "children of " + path.Base(g.Path)
	case strings.HasPrefix(p, g.Path+"/"):
		return p[len(g.Path)+1:]
	}
	return p
}

// addLive adds what only a live view needs to p: every phase's histogram,
// the timeline so far and the lock's wait graph (Options.ProgressPhases).
func (r *runner) addLive(p *Progress, lock *WaitGraph) {
	if !r.opts.ProgressPhases {
		return
	}
	p.Buckets = make(map[metrics.Phase][]metrics.Bucket, len(p.Phases))
	for ph := range p.Phases {
		p.Buckets[ph] = r.rec.Buckets(ph)
	}
	p.Timeline = r.rec.Timeline()
	p.Lock = lock
}

// keepBusiest keeps g as the window's wait graph if it is the busiest so
// far: a release in its interval (so it says what a release woke), then
// a holder (so it shows who is waited on), then someone drawn waiting,
// then the most drawn with a pending watch (a herd's fan at its widest,
// not the moment after a release when all race to create), then the most
// waiters; a later graph wins a tie.
func (r *runner) keepBusiest(g *WaitGraph) {
	if g == nil {
		return
	}
	if b := r.busiest; b != nil && busier(b, g) {
		return
	}
	r.busiest = g
}

// watchingIn counts the waiters g draws with a pending watch: its fan's
// (a herd's, on one path) or its listed waiters' (a chain's, one path
// each), whichever says more.
func watchingIn(g *WaitGraph) int {
	fan, listed := 0, 0
	for _, f := range g.Fan {
		fan += f.Waiters
	}
	for _, w := range g.Waiters {
		if w.Watching != "" {
			listed++
		}
	}
	return max(fan, listed)
}

// busier reports whether a is strictly busier than b (keepBusiest).
func busier(a, b *WaitGraph) bool {
	flag := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	return cmp.Or(
		cmp.Compare(flag(a.Releases > 0), flag(b.Releases > 0)),
		cmp.Compare(flag(len(a.Holders) > 0), flag(len(b.Holders) > 0)),
		// Then one with someone drawn waiting (a herd's fan, a chain's
		// waiters): right after a herd's release every waiter may be
		// racing to create, with nothing to draw.
		cmp.Compare(flag(len(a.Fan)+len(a.Waiters) > 0), flag(len(b.Fan)+len(b.Waiters) > 0)),
		cmp.Compare(watchingIn(a), watchingIn(b)),
		cmp.Compare(a.WaitersTotal, b.WaitersTotal),
	) > 0
}
