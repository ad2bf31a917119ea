package inspect

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/recipes"
)

// queueHistoryLen is how many depth samples a queue keeps.
const queueHistoryLen = 120

// scanState is what the inspector remembers between snapshots. Guarded by
// Inspector.scanMu: one snapshot at a time.
type scanState struct {
	polls  int
	dirs   map[string]dirKind   // lock and queue directories found (server paths)
	stats  map[string]nodeInfo  // node owner and ctime cache (they never change)
	queues map[string]*queueRec // per queue directory
	// seen holds the anomalies of the previous snapshot: one is reported
	// only when two snapshots in a row show it, so that a waiter caught
	// between getChildren and exists is not flagged.
	seen map[anomalyKey]bool
	// watches remembers when nodes appeared and watches were confirmed
	// (watchjudge.go).
	watches watchMemory
	// listings caches directory listings by path, re-read only when the
	// directory's children change (sameChildren).
	listings map[string]*listing
	// kazooSems are kazoo Semaphore directories (foreign.go); leases
	// caches whether a Curator semaphore's "leases" directory exists.
	kazooSems map[string]bool
	leases    map[string]bool
}

func (st *scanState) init() {
	if st.dirs == nil {
		st.kazooSems, st.leases = map[string]bool{}, map[string]bool{}
		st.dirs = map[string]dirKind{}
		st.stats = map[string]nodeInfo{}
		st.queues = map[string]*queueRec{}
		st.listings = map[string]*listing{}
	}
}

type queueRec struct {
	depths  []int
	seqs    []int64      // the items of the last listing (queueflow.go)
	samples []flowSample // cumulative flow, for the rates
}

type anomalyKey struct {
	dir, node string
	kind      AnomalyKind
}

// Run takes a snapshot every poll interval (stretched while the servers
// look busy, see Cost) until ctx ends and sends each on the returned
// channel, which it closes at the end. A slow consumer delays the next
// snapshot; none is dropped.
//
// The first snapshots are early ones: while the first walk of the tree
// runs or a member's first poll is in flight (for at most earlyFor), one
// every earlyWait shows what is known so far (the locks the walk has
// found, the members that answered), so that the first screen does not
// wait for the slowest answer.
func (in *Inspector) Run(ctx context.Context) <-chan *Snapshot {
	out := make(chan *Snapshot)
	go func() {
		defer close(out)
		began := time.Now()
		for early := true; ; {
			start := time.Now()
			snap := in.snapshot(ctx, early)
			early = early && (snap.Scanning || snap.Cluster.Pending) && time.Since(began) < earlyFor
			select {
			case out <- snap:
			case <-ctx.Done():
				return
			}
			wait := time.NewTimer(max(snap.Cost.Interval-time.Since(start), 0))
			select {
			case <-wait.C:
			case <-ctx.Done():
				wait.Stop()
				return
			}
		}
	}()
	return out
}

// Early snapshots (Run): each waits at most earlyWait for the first walk
// of the tree, for at most earlyFor after Run starts. A later snapshot
// that starts a walk waits at most walkWait for it after its poll.
const (
	earlyWait = 250 * time.Millisecond
	earlyFor  = 10 * time.Second
	walkWait  = time.Second
)

// Snapshot polls every member, merges their answers, and scans the tree for
// locks and queues. Problems become notices: a snapshot always comes back.
func (in *Inspector) Snapshot(ctx context.Context) *Snapshot { return in.snapshot(ctx, false) }

// snapshot is a snapshot made inert (package inert): every string in it came
// from a server or names a node, and reaches a terminal.
func (in *Inspector) snapshot(ctx context.Context, early bool) *Snapshot {
	snap := in.collect(ctx, early)
	in.relSnapshot(snap)
	inert.All(snap)
	return snap
}

// collect is Snapshot; an early one (Run) does not wait for the
// members' polls (cons, dump and the capability probe can take seconds on
// a large ensemble) but for the walk of the tree, at most earlyWait, and
// shows the locks found so far, with the answers not in yet pending.
func (in *Inspector) collect(ctx context.Context, early bool) *Snapshot {
	in.scanMu.Lock()
	defer in.scanMu.Unlock()
	now := time.Now()
	walking := in.startWalk(ctx)
	need, never, budget := in.needWatches.Load(), in.opts.NoWatches, in.watchBudget()
	asked := 0
	cmds := func(i int) []fourlw.Command {
		now := time.Now()
		ok, _ := wantWchp(&in.watches[i], need, never, budget, now)
		c := commandsFor(&in.watches[i], ok, now)
		if slices.Contains(c, fourlw.CmdWchp) {
			asked++
		}
		return c
	}
	var polls []memberPoll
	if early {
		// The first poll asks srvr and one costly command (commandsFor);
		// while early snapshots last, a member is polled again once a
		// poll interval has passed, for the next one.
		if in.scan.polls == 0 || now.Sub(in.earlyPolled) >= in.pollInterval() {
			in.poller.start(cmds) // the later early ones wait for these
			in.earlyPolled = now
		}
		in.awaitWalk(ctx, earlyWait)
		polls = in.poller.Latest()
	} else {
		polls = in.poller.Poll(ctx, cmds)
	}
	var notes []string
	watchesPending := true
	for i := range polls {
		p := &polls[i]
		updateWatches(&in.watches[i], p, in.pollInterval(), need, never, budget)
		if n := in.watches[i].note; n != "" && p.Err == nil && !p.Pending && !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
		// The watch list is on its way when the member's first poll is
		// in flight, or when it is asked in the next poll.
		if p.Err == nil && p.Wchp == nil {
			next, _ := wantWchp(&in.watches[i], need, never, budget, time.Now())
			watchesPending = watchesPending && !never && (p.Pending || next)
		}
	}
	snap := &Snapshot{At: now, Cluster: mergePolls(now, polls)}
	for i, p := range polls {
		if p.Err == nil && !p.Pending && !in.watches[i].askedAll() {
			// Its sessions and ephemerals are still to come (commandsFor
			// asks one costly command a poll until each was asked once).
			snap.Cluster.Pending, snap.Cluster.SessionsComplete = true, false
		}
	}
	snap.Cluster.Self = in.SessionID()
	dropInspectors(&snap.Cluster)
	snap.Cluster.WatchesNote = strings.Join(notes, "; ")
	snap.Cluster.WatchesPending = snap.Cluster.WatchesUnknown && watchesPending
	if snap.Cluster.WatchesPending {
		snap.Cluster.WatchesNote = ""
	}
	snap.Cost.Wchp = asked
	for _, p := range polls {
		if p.Err != nil {
			snap.Notices = append(snap.Notices, fmt.Sprintf("member %s is down: %v", p.Addr, p.Err))
		}
	}
	if missing := missingCaps(snap.Cluster.Capabilities); missing != "" {
		snap.Notices = append(snap.Notices, missing)
	}
	busy := busyReason(&snap.Cluster, in.lowest)
	if !early {
		// Early snapshots reread the same polls: they would count one busy
		// answer several times.
		in.backoff = nextBackoff(in.backoff, busy != "")
	}
	snap.Cost.Backoff, snap.Cost.BusyReason = in.backoff, busy
	snap.Cost.Interval = in.pollInterval() * time.Duration(in.backoff)
	if early {
		snap.Cost.Interval = earlyWait
	}
	if busy != "" {
		snap.Notices = append(snap.Notices, fmt.Sprintf("servers busy (%s): polling every %s", busy, snap.Cost.Interval))
	}
	if walking && !early {
		// What this snapshot's walk finds shows in this snapshot: while
		// the servers are busy, snapshots are maxBackoff intervals apart
		// (16 s), and a new directory waited for the next one, two or
		// three such intervals in all (a load run's new lock, unseen for
		// 2 minutes on CI). A small tree's walk ends during the poll; a
		// large one's is paced and its finds join as they come (awaitWalk).
		in.awaitWalk(ctx, walkWait)
	}
	in.takeWalk(snap)
	snap.Scanning = !in.walker.walked
	c, err := in.conn(ctx)
	if err != nil {
		snap.Notices = append(snap.Notices, "no session: "+err.Error())
		return snap
	}
	in.markSession(ctx, c)
	snap.Cost.Stats += in.checkFollowed(ctx, c)
	in.scanTree(ctx, c, snap)
	return snap
}

// walkResult is what one walk of the tree found.
type walkResult struct {
	found  []string // directories whose children parse as a recipe layout
	denied []string // directories whose ACL denies this session a listing
	// semaphores are kazoo Semaphore directories (foreign.go).
	semaphores []string
	visited    int
	truncated  bool
	cost       Cost
}

// The walk from the scan roots runs in the background, never in a
// snapshot's way: the first snapshot (the first Locks screen) shows what
// the servers point at (the parents of recipe-named ephemerals and watched
// nodes) at once, and the directories the walk finds join from the
// snapshot after it ends. One walk at a time, every RescanEvery snapshots
// and at least every RescanEvery base poll intervals (while the servers are
// busy and snapshots are stretched, new directories, such as a queue whose
// items no session owns or watches by name, must still appear within that
// time), and no sooner than walkAverage allows on a large tree. It
// has its own listing cache, so that re-walks re-list only directories
// whose children changed (sameChildren).
type walker struct {
	running bool
	walked  bool            // a walk has ended
	started time.Time       // when the last walk started
	done    chan walkResult // 1 slot; the walk goroutine sends its result
	// lastUnits is what the last walk cost (walkUnits).
	lastUnits int
	// denied are the directories the last walk could not list (ACL).
	denied   []string
	listings map[string]*listing
	polls    int
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	// found is what the walk in progress has found so far, for the first
	// snapshot, which does not wait for the whole walk.
	foundMu sync.Mutex
	found   []string
}

// startWalk starts a walk when one is due and none is running, and says
// whether it did. Called with scanMu held.
func (in *Inspector) startWalk(ctx context.Context) bool {
	w := &in.walker
	every := in.opts.RescanEvery
	if every <= 0 {
		every = DefaultRescanEvery
	}
	due := in.scan.polls%every == 0 || time.Since(w.started) >= time.Duration(every)*in.pollInterval()
	spread := time.Since(w.started) >= time.Duration(w.lastUnits)*time.Second/walkAverage
	if w.running || !due || !spread {
		return false
	}
	c, err := in.conn(ctx)
	if err != nil {
		return false
	}
	if w.done == nil {
		w.done = make(chan walkResult, 1)
		w.listings = map[string]*listing{}
	}
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return false
	}
	wctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.running = true
	w.started = time.Now()
	w.polls++
	w.wg.Add(1)
	in.mu.Unlock()
	w.foundMu.Lock()
	w.found = nil
	w.foundMu.Unlock()
	go func() {
		defer w.wg.Done()
		defer cancel()
		w.done <- in.walk(wctx, c, w.listings, w.polls, func(dir string) {
			w.foundMu.Lock()
			w.found = append(w.found, dir)
			w.foundMu.Unlock()
		})
	}()
	return true
}

// takeWalk adds a finished walk's directories to the scan. Called with
// scanMu held.
func (in *Inspector) takeWalk(snap *Snapshot) {
	w := &in.walker
	if !w.running {
		return
	}
	select {
	case r := <-w.done:
		w.running, w.walked = false, true
		w.lastUnits = walkUnits(r.cost)
		in.scan.init()
		for _, d := range r.found {
			if _, ok := in.scan.dirs[d]; !ok {
				in.scan.dirs[d] = dirNone // classified when read
			}
		}
		for _, d := range r.semaphores {
			in.scan.kazooSems[d] = true
		}
		snap.Cost.Walked, snap.Cost.Stats, snap.Cost.Lists, snap.Cost.Names = r.visited, r.cost.Stats, r.cost.Lists, r.cost.Names
		in.walkTruncated = r.truncated
		w.denied = r.denied
	default:
	}
	if in.walkTruncated {
		snap.Notices = append(snap.Notices, fmt.Sprintf("tree scan stopped after %d directories; locks and queues deeper down may be missing (narrow it with --scan-root)", in.maxScanDirs()))
	}
}

// awaitWalk waits until the walk in progress, if any, has its result
// ready for takeWalk, at most d or until ctx ends; if the walk is still
// running then, the directories it found so far join the scan. Called with
// scanMu held.
func (in *Inspector) awaitWalk(ctx context.Context, d time.Duration) {
	w := &in.walker
	if !w.running {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-w.done:
		w.done <- r // the slot is free: takeWalk takes it back
		return
	case <-t.C:
	case <-ctx.Done():
	}
	w.foundMu.Lock()
	found := slices.Clone(w.found)
	w.foundMu.Unlock()
	in.scan.init()
	for _, d := range found {
		if _, ok := in.scan.dirs[d]; !ok {
			in.scan.dirs[d] = dirNone // classified when read
		}
	}
}

// missingCaps summarises the capability probe in one line, naming the
// commands that do not answer and the whitelist line that allows exactly
// what the inspector asks.
func missingCaps(caps []Capability) string {
	var cmds []string
	enable := ""
	for _, c := range caps {
		if !c.Available && !slices.Contains(cmds, c.Command) {
			cmds = append(cmds, c.Command)
			if enable == "" {
				enable = c.Enable
			}
		}
	}
	if len(cmds) == 0 {
		return ""
	}
	s := "unavailable: " + strings.Join(cmds, ", ")
	if enable != "" {
		s += "; enable with: " + enable
		if enable == WhitelistLine() {
			s += " (plus any others your tools use, e.g. ruok)"
		}
	}
	return s + " (see Servers)"
}

// scanTree finds lock and queue directories and reads them.
//
// Cost on the servers, per snapshot: one exists per known lock or queue
// directory (pipelined, pipelineDepth in flight on the one connection), and
// a getChildren only for those whose children changed since their last
// listing; every RescanEvery snapshots (less often on a large tree), the
// walk from the scan roots, also gated by sameChildren and paced
// (walkRate). A directory becomes a candidate only when one of its
// children's names parses as a recipe node: the parents of ordinary
// ephemerals (registrations) and of watched config keys are never listed.
func (in *Inspector) scanTree(ctx context.Context, c *zk.Conn, snap *Snapshot) {
	st := &in.scan
	st.init()
	every := in.opts.RescanEvery
	if every <= 0 {
		every = DefaultRescanEvery
	}
	st.polls++

	// Candidates the servers point at: parents of ephemeral and of watched
	// nodes whose names parse as recipe nodes.
	owners := map[string]int64{}
	for _, s := range snap.Cluster.Sessions {
		for _, p := range s.Ephemerals {
			owners[p] = s.ID
			if _, ok := recipes.ParseNode(path.Base(p)); ok {
				in.addCandidate(st, path.Dir(p))
			}
		}
	}
	for _, w := range snap.Cluster.Watches {
		if _, ok := recipes.ParseNode(path.Base(w.Path)); ok {
			in.addCandidate(st, path.Dir(w.Path))
		}
	}

	dirs := make([]string, 0, len(st.dirs))
	for d := range st.dirs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	lists := in.listDirs(ctx, c, st.listings, st.polls, pipelineDepth, dirs, &snap.Cost)
	seen := map[anomalyKey]bool{}
	denied := slices.Clone(in.walker.denied)
	defer func() {
		for i, d := range denied {
			if r, ok := in.rel(d); ok {
				denied[i] = r
			}
		}
		snap.Unreadable, snap.Notices = unreadable(denied, snap.Notices)
	}()
	for _, dir := range dirs {
		if ctx.Err() != nil {
			return
		}
		l, ok := lists[dir]
		switch {
		case !ok:
			continue // the request failed: next snapshot
		case l == nil: // gone
			delete(st.dirs, dir)
			delete(st.queues, dir)
			continue
		case l.denied:
			denied = append(denied, dir)
			continue
		}
		names, stat := l.names, l.stat
		if st.kazooSems[dir] && (len(names) == 0 || kazooLeases(names)) {
			st.dirs[dir] = dirLock
			snap.Locks = append(snap.Locks, in.readKazooSemaphore(ctx, c, st, dir, names, &snap.Cluster, snap.At))
			continue
		}
		nodes, unrecognised := recipes.ParseChildren(names)
		switch kind := classify(nodes); kind {
		case dirLock:
			st.dirs[dir] = dirLock
			if sem, ok := strings.CutSuffix(dir, kazooSemaphoreLock); ok {
				st.kazooSems[sem] = true
				in.addCandidate(st, sem)
			}
			l := in.readLock(ctx, c, st, dir, nodes, unrecognised, owners, &snap.Cluster, snap.At)
			l.Anomalies = confirmAnomalies(l, st.seen, seen)
			snap.Locks = append(snap.Locks, l)
		case dirQueue:
			if q, ok := in.readQueue(c, st, dir, nodes, stat, snap.At); ok {
				in.takenItems(ctx, c, &q, dir, snap.At)
				st.dirs[dir] = dirQueue
				snap.Queues = append(snap.Queues, q)
			} else {
				delete(st.dirs, dir)
			}
		default:
			if st.dirs[dir] == dirNone {
				delete(st.dirs, dir)
			}
			// A known lock or queue that is empty right now stays known.
			switch st.dirs[dir] {
			case dirQueue:
				snap.Queues = append(snap.Queues, in.emptyQueue(st, dir, stat, snap.At))
			case dirLock:
				snap.Locks = append(snap.Locks, Lock{Path: dir, Layout: "(free)", Unrecognised: unrecognised})
			}
		}
	}
	st.seen = seen
	st.watches.forget(st.polls)
	// Herds outside any lock directory: a node many sessions watch. They
	// are listed apart from the locks.
	snap.Herds = in.looseHerds(snap, owners)
	// Forget cached stats of nodes gone from every listing.
	if len(st.stats) > 4*in.statLimit()*max(len(snap.Locks), 1) {
		clear(st.stats)
	}
	// Forget listings of directories neither walked nor scanned lately.
	for d, l := range st.listings {
		if st.polls-l.used > 2*every {
			delete(st.listings, d)
		}
	}
}

// unreadable sorts the directories whose listing the ACL denied (from the
// walk and from the scan of directories holding clients' recipe nodes) and
// names them in a notice: a lock or queue in one is not shown, and the
// user must hear that rather than see nothing.
func unreadable(dirs []string, notices []string) ([]string, []string) {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	if len(dirs) == 0 {
		return nil, notices
	}
	shown := dirs
	if len(shown) > 3 {
		shown = shown[:3]
	}
	list := strings.Join(shown, ", ")
	if len(dirs) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(dirs)-len(shown))
	}
	what := "directory"
	if len(dirs) > 1 {
		what = "directories"
	}
	return dirs, append(notices, fmt.Sprintf("%d %s not readable: %s (ACL; see --auth): locks and queues there are not shown", len(dirs), what, list))
}

func (in *Inspector) addCandidate(st *scanState, dir string) {
	if _, ok := in.rel(dir); !ok || dir == "/" || dir == "/zookeeper" {
		return
	}
	if _, ok := st.dirs[dir]; !ok {
		st.dirs[dir] = dirNone
	}
}

func (in *Inspector) maxScanDirs() int {
	if in.opts.MaxScanDirs > 0 {
		return in.opts.MaxScanDirs
	}
	return DefaultMaxScanDirs
}

func (in *Inspector) statLimit() int {
	if in.opts.StatLimit > 0 {
		return in.opts.StatLimit
	}
	return DefaultStatLimit
}

// walkChunk is how many directories of one level the walk lists before it
// reports what it found so far and paces itself.
const walkChunk = 32

// The walk reads up to MaxScanDirs directories (a listing each the first
// time, then an exists each and a listing where the children changed)
// every RescanEvery snapshots. Sent as fast as the server answers, that is
// a burst of a few thousand reads, and on a 205,000-znode server the first
// walk lists about 190,000 names; other clients' writes that arrive
// meanwhile wait. Walked from the first snapshot on at 100 requests a
// second, names not counted, it raised a steady writer's setData p99 by
// 30% on that server (1.08x with the walk limited by --scan-root;
// BenchmarkInspectorCost). So the walk keeps walkDepth requests in flight
// and spends at most walkRate cost units a second, a unit being a request
// or namesPerUnit names listed: the first walk of that tree (about 3,900
// units) takes about 80 s, and directories that no session owns or watches
// by name join as it finds them. A walk starts again only once the last
// one's units, spread since its start, average at most walkAverage a
// second: on a small tree every RescanEvery snapshots as before, on a
// 2,000-directory one every 200 s (--scan-root narrows the walk). The
// walkRate budget is shared with the user's searches (treePacer).
const (
	walkDepth    = pipelineDepth
	walkBurst    = 100 // units spent at once: a small tree is walked unpaced
	walkRate     = 50
	walkAverage  = 10
	namesPerUnit = 100
)

// walkUnits is what a walk has cost so far, in walkRate's units.
func walkUnits(c Cost) int { return c.Stats + c.Lists + c.Names/namesPerUnit }

func (in *Inspector) walk(ctx context.Context, c *zk.Conn, cache map[string]*listing, poll int, found func(dir string)) (r walkResult) {
	roots := in.opts.ScanRoots
	if len(roots) == 0 {
		roots = []string{"/"}
	}
	level := make([]string, 0, len(roots))
	for _, r := range roots {
		level = append(level, in.abs(r))
	}
	fanout := in.opts.MaxScanFanout
	if fanout <= 0 {
		fanout = DefaultMaxScanFanout
	}
	limit := in.maxScanDirs()
	spent := 0
	pace := func() { // the units spent since the last chunk, from the shared budget
		units := walkUnits(r.cost)
		in.pacer.spend(ctx, units-spent)
		spent = units
	}
	for len(level) > 0 && ctx.Err() == nil {
		if r.visited+len(level) > limit {
			level, r.truncated = level[:limit-r.visited], true
		}
		r.visited += len(level)
		var next []string
		for chunk := range slices.Chunk(level, walkChunk) {
			pace()
			lists := in.listDirs(ctx, c, cache, poll, walkDepth, chunk, &r.cost)
			for _, dir := range chunk {
				l := lists[dir]
				if l == nil {
					continue
				}
				if l.denied {
					r.denied = append(r.denied, dir)
					continue
				}
				for _, sem := range kazooSemaphores(dir, l.names) {
					r.semaphores = append(r.semaphores, sem)
					r.found = append(r.found, sem)
					found(sem)
				}
				nodes, unrecognised := recipes.ParseChildren(l.names)
				if classify(nodes) != dirNone {
					r.found = append(r.found, dir)
					found(dir)
				}
				if len(l.names) > fanout {
					continue
				}
				for _, name := range unrecognised {
					child := path.Join(dir, name)
					if child == "/zookeeper" {
						continue
					}
					next = append(next, child)
				}
			}
		}
		if r.truncated {
			break
		}
		level = next
	}
	// Forget listings of directories this walk did not reach.
	for d, l := range cache {
		if l.used != poll {
			delete(cache, d)
		}
	}
	return r
}

// listing is one directory's children as last read, and its stat then.
type listing struct {
	names []string
	stat  *zk.Stat
	used  int // scanState.polls when last asked for
	// denied: the directory's ACL denies this session its listing (never
	// cached: credentials or the ACL may change).
	denied bool
}

// pipelineDepth is how many requests the scan keeps in flight at once.
// go-zookeeper writes them back to back on its one connection and matches
// the replies, so N small requests cost about one round trip, not N.
//
// Not deeper: a burst of reads delays other clients' requests that arrive
// meanwhile, and the inspector's cost on a production server is judged by
// the p99 of others' writes (BenchmarkInspectorCost). At 4, a snapshot's
// stats of 20 lock directories cost 5 round trips.
const pipelineDepth = 4

// sameChildren reports whether a directory's stat now (from an exists)
// shows the children it had when listed: the same node (czxid) whose
// children have not changed since (cversion, pzxid). The cversion alone
// does not tell: a directory deleted and created again starts over at 0,
// and zkherd load does that to /zkherd/runs between runs (one child each
// time, cversion 1 both times; a queue run's directory went unwalked).
func sameChildren(now, listed *zk.Stat) bool {
	return now.Czxid == listed.Czxid && now.Pzxid == listed.Pzxid && now.Cversion == listed.Cversion
}

// listDirs returns the children of dirs, asking getChildren again only for
// the directories whose children changed (sameChildren, from an exists sent
// first) since their cached listing. A directory that no longer exists maps
// to nil, one whose ACL denies the listing to a denied listing; one whose
// request failed otherwise is absent.
func (in *Inspector) listDirs(ctx context.Context, c *zk.Conn, cache map[string]*listing, poll, depth int, dirs []string, cost *Cost) map[string]*listing {
	type result struct {
		dir    string
		l      *listing
		gone   bool
		denied bool
	}
	var mu sync.Mutex
	out := make(map[string]*listing, len(dirs))
	work := func(dir string) result {
		cached := cache[dir]
		if cached != nil {
			ok, stat, err := c.Exists(dir)
			mu.Lock()
			cost.Stats++
			mu.Unlock()
			switch {
			case err != nil:
				return result{dir: dir}
			case !ok:
				return result{dir: dir, gone: true}
			case sameChildren(stat, cached.stat):
				return result{dir: dir, l: &listing{names: cached.names, stat: stat}}
			}
		}
		names, stat, err := c.Children(dir)
		mu.Lock()
		cost.Lists++
		cost.Names += len(names)
		mu.Unlock()
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return result{dir: dir, gone: true}
		case errors.Is(err, zk.ErrNoAuth):
			return result{dir: dir, denied: true}
		case err != nil:
			return result{dir: dir}
		}
		return result{dir: dir, l: &listing{names: names, stat: stat}}
	}
	results := pipelinedN(ctx, depth, dirs, work)
	for _, r := range results {
		switch {
		case r.gone:
			out[r.dir] = nil
			delete(cache, r.dir)
		case r.denied:
			out[r.dir] = &listing{denied: true}
			delete(cache, r.dir)
		case r.l != nil:
			r.l.used = poll
			cache[r.dir] = r.l
			out[r.dir] = r.l
		}
	}
	return out
}

// pipelined runs f on every item with up to pipelineDepth calls at once and
// returns the results in no particular order; it stops handing out items
// when ctx ends.
func pipelined[T, R any](ctx context.Context, items []T, f func(T) R) []R {
	return pipelinedN(ctx, pipelineDepth, items, f)
}

// pipelinedN is pipelined with depth calls at once.
func pipelinedN[T, R any](ctx context.Context, depth int, items []T, f func(T) R) []R {
	out := make([]R, 0, len(items))
	if len(items) == 0 {
		return out
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		next = make(chan T)
	)
	for range min(depth, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range next {
				r := f(it)
				mu.Lock()
				out = append(out, r)
				mu.Unlock()
			}
		}()
	}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		next <- it
	}
	close(next)
	wg.Wait()
	return out
}

// readLock fills node owners and ages (up to StatLimit stats, cached) and
// builds the chain.
func (in *Inspector) readLock(ctx context.Context, c *zk.Conn, st *scanState, dir string, nodes []recipes.Node,
	unrecognised []string, owners map[string]int64, cl *Cluster, at time.Time) Lock {
	var missing []string
	for i, n := range nodes {
		if i >= in.statLimit() {
			break
		}
		p := path.Join(dir, n.Name)
		if _, ok := st.stats[p]; !ok {
			missing = append(missing, p)
		}
	}
	for p, info := range statAll(ctx, c, missing) {
		st.stats[p] = info
	}
	sem, _ := waitingRoom(dir, func(leases string) bool {
		ok, known := st.leases[leases]
		if !known {
			ok, _, _ = c.Exists(leases)
			st.leases[leases] = ok
		}
		return ok
	})
	return buildLock(lockInput{
		Dir:          dir,
		WaitingFor:   sem,
		Nodes:        nodes,
		Unrecognised: unrecognised,
		Cluster:      cl,
		At:           at,
		Listed:       time.Now(), // after the listing, before the next poll
		HerdMin:      in.opts.HerdThreshold,
		Memory:       &st.watches,
		Poll:         st.polls,
		Info: func(name string) (nodeInfo, bool) {
			p := path.Join(dir, name)
			if info, ok := st.stats[p]; ok {
				return info, true
			}
			if owner, ok := owners[p]; ok {
				return nodeInfo{Owner: owner}, true
			}
			return nodeInfo{}, false
		},
	})
}

// statAll stats paths, pipelined.
func statAll(ctx context.Context, c *zk.Conn, paths []string) map[string]nodeInfo {
	type result struct {
		p    string
		info nodeInfo
		ok   bool
	}
	out := make(map[string]nodeInfo, len(paths))
	for _, r := range pipelined(ctx, paths, func(p string) result {
		ok, stat, err := c.Exists(p)
		if err != nil || !ok {
			return result{}
		}
		return result{p, infoOf(stat), true}
	}) {
		if r.ok {
			out[r.p] = r.info
		}
	}
	return out
}

// readQueue samples a queue directory: depth, rates, head age. ok is false
// when the items are ephemeral (then it is not a queue). A head consumed
// since the listing does not make the queue vanish: the next items are
// tried, then the newest ones (persistentTail), and a directory already
// known as a queue stays one.
func (in *Inspector) readQueue(c *zk.Conn, st *scanState, dir string, nodes []recipes.Node, stat *zk.Stat, at time.Time) (Queue, bool) {
	head, age := "", time.Duration(-1)
	for _, n := range nodes[:min(len(nodes), 8)] {
		info, ok := cachedStat(c, st, path.Join(dir, n.Name))
		if !ok {
			continue // consumed since the listing
		}
		if info.Owner != 0 {
			return Queue{}, false
		}
		head, age = n.Name, max(at.Sub(info.Created), 0)
		break
	}
	if head == "" && st.dirs[dir] != dirQueue && !persistentTail(c, st, dir, nodes) {
		return Queue{}, false
	}
	q := in.sampleQueue(st, dir, nodes, at)
	q.Layout = string(nodes[0].Layout)
	q.Head, q.HeadAge = head, age
	return q, true
}

// persistentTail reports whether the newest items of a listing whose
// head items were all consumed since it was taken are persistent: a queue
// consumed fast (its head taken within milliseconds of being listed) is
// still a queue, only its head is not known.
func persistentTail(c *zk.Conn, st *scanState, dir string, nodes []recipes.Node) bool {
	for i := len(nodes) - 1; i >= max(len(nodes)-8, 8); i-- {
		if info, ok := cachedStat(c, st, path.Join(dir, nodes[i].Name)); ok {
			return info.Owner == 0
		}
	}
	return false
}

// cachedStat is node p's owner and creation time, from the scan's cache or
// else read (and cached); ok is false when p is gone or unreadable.
func cachedStat(c *zk.Conn, st *scanState, p string) (nodeInfo, bool) {
	if info, ok := st.stats[p]; ok {
		return info, true
	}
	exists, stat, err := c.Exists(p)
	if err != nil || !exists {
		return nodeInfo{}, false
	}
	info := infoOf(stat)
	st.stats[p] = info
	return info, true
}

// infoOf is what the scan keeps of a node's stat.
func infoOf(stat *zk.Stat) nodeInfo {
	return nodeInfo{Owner: stat.EphemeralOwner, Created: time.UnixMilli(stat.Ctime)}
}

func (in *Inspector) emptyQueue(st *scanState, dir string, stat *zk.Stat, at time.Time) Queue {
	q := in.sampleQueue(st, dir, nil, at)
	q.HeadAge = -1
	return q
}

// sampleQueue records a depth sample and derives the rates.
func (in *Inspector) sampleQueue(st *scanState, dir string, nodes []recipes.Node, at time.Time) Queue {
	q := Queue{Path: dir, Depth: len(nodes)}
	rec := st.queues[dir]
	if rec == nil {
		rec = &queueRec{}
		st.queues[dir] = rec
	}
	q.EnqueueRate, q.DequeueRate = rec.flow(seqsOf(nodes), at)
	rec.depths = append(rec.depths, q.Depth)
	if len(rec.depths) > queueHistoryLen {
		rec.depths = rec.depths[len(rec.depths)-queueHistoryLen:]
	}
	q.Depths = slices.Clone(rec.depths)
	return q
}

// confirmAnomalies keeps the anomalies also present in the previous
// snapshot, records this snapshot's in now, and clears the flags of entries
// whose anomalies are not confirmed yet. Unrecognised children and herds
// need no confirmation: they are facts of one listing.
func confirmAnomalies(l Lock, prev, now map[anomalyKey]bool) []Anomaly {
	keep := l.Anomalies[:0:0]
	for _, a := range l.Anomalies {
		k := anomalyKey{l.Path, a.Node, a.Kind}
		now[k] = true
		if prev[k] || a.Kind == AnomalyUnrecognised || a.Kind == AnomalyHerd {
			keep = append(keep, a)
		}
	}
	for i := range l.Entries {
		e := &l.Entries[i]
		var flags AnomalySet
		for k := AnomalyKind(0); k < numAnomalyKinds; k++ {
			if !e.Flags.Has(k) {
				continue
			}
			if key := (anomalyKey{l.Path, e.Node, k}); prev[key] || k == AnomalyHerd {
				flags = flags.With(k)
			}
			now[anomalyKey{l.Path, e.Node, k}] = true
		}
		e.Flags = flags
	}
	return keep
}

// SystemNode reports whether p (a server path) is in ZooKeeper's own
// namespace, /zookeeper: every Curator client (its EnsembleTracker) and
// every client that follows reconfigurations watches /zookeeper/config,
// and a change there is meant to reach them all: many watchers on it are
// no herd to warn of (7 Curator sessions were flagged "! herd").
func SystemNode(p string) bool { return p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") }

// looseHerds reports nodes outside the lock directories that many sessions
// watch, as one-node locks: everyone waiting on one node is a herd whatever
// the recipe.
func (in *Inspector) looseHerds(snap *Snapshot, owners map[string]int64) []Lock {
	herdMin := in.opts.HerdThreshold
	if herdMin <= 0 {
		herdMin = DefaultHerdThreshold
	}
	inLock := map[string]bool{}
	for _, l := range snap.Locks {
		inLock[l.Path] = true
	}
	var out []Lock
	c := &snap.Cluster
	for _, w := range c.Watches {
		dir, name := path.Split(w.Path)
		dir = path.Clean(dir)
		if len(w.Sessions) < herdMin || inLock[dir] || SystemNode(w.Path) {
			continue
		}
		if _, ok := in.rel(w.Path); !ok {
			continue
		}
		// A Curator DistributedBarrier is such a node too, and there
		// waking every waiter is the point: which it is cannot be known.
		l := Lock{Path: w.Path, Layout: "watched node (barrier or herd)"}
		holder := LockEntry{Node: name, Seq: -1, Kind: "node", Role: RoleHolder, Age: -1}
		if owner, ok := owners[w.Path]; ok {
			holder.Session = owner
			if s, ok := c.Session(owner); ok {
				holder.Endpoint = s.Endpoint
			}
		} else {
			holder.Role = RoleUnknown
		}
		l.Entries = append([]LockEntry{holder}, herdWaiters(name, w.Sessions, c)...)
		for i := 1; i < len(l.Entries); i++ {
			l.Entries[i].Flags = l.Entries[i].Flags.With(AnomalyHerd)
		}
		shown, _ := in.rel(w.Path)
		l.Anomalies = []Anomaly{{Kind: AnomalyHerd, Node: name,
			Detail: fmt.Sprintf("%d sessions watch %s: a change wakes them all", len(w.Sessions), shown)}}
		out = append(out, l)
	}
	return out
}
