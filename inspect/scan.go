package inspect

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/exit"
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
	// still remembers how long each lock or queue directory has been
	// unchanged, to read it less often (still.go).
	still map[string]*stillness
}

func (st *scanState) init() {
	if st.dirs == nil {
		st.kazooSems, st.leases = map[string]bool{}, map[string]bool{}
		st.dirs = map[string]dirKind{}
		st.stats = map[string]nodeInfo{}
		st.queues = map[string]*queueRec{}
		st.listings = map[string]*listing{}
		st.still = map[string]*stillness{}
	}
}

type queueRec struct {
	depths  []int
	seqs    []int64      // the items of the last listing (queueflow.go)
	samples []flowSample // cumulative flow, for the rates
	// last is the queue as its last read showed it, at lastAt: shown
	// again while the directory is still and not read (still.go).
	last   *Queue
	lastAt time.Time
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
	shown := in.showing()
	need, never, budget := shown.Watches, in.opts.NoWatches, in.watchBudget()
	asked := 0
	cmds := func(i int) []fourlw.Command {
		now := time.Now()
		ok, _ := wantWchp(&in.watches[i], need, never, budget, now, in.opts.Name)
		c := commandsFor(&in.watches[i], ok, shown, now)
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
	fresh := false // a member answered since the last snapshot
	for i := range polls {
		p := &polls[i]
		fresh = updateWatches(&in.watches[i], p, in.pollInterval(), need, never, budget, in.opts.Name) || fresh
		if n := in.watches[i].note; n != "" && p.Err == nil && !p.Pending && !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
		// The watch list is on its way when the member's first poll is
		// in flight, or when it is asked in the next poll.
		if p.Err == nil && p.Wchp == nil {
			next, _ := wantWchp(&in.watches[i], need, never, budget, time.Now(), in.opts.Name)
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
	if !early && fresh {
		// Early snapshots, and snapshots with nothing due from any member
		// (srvrPeriod), reread the same polls: they would count one busy
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
	if snap.Scanning {
		snap.ScanRead = int(in.walker.read.Load())
	}
	c, err := in.conn(ctx)
	if err != nil {
		snap.Notices = append(snap.Notices, "no session: "+err.Error())
		return snap
	}
	in.markSession(ctx, c)
	snap.Cost.Stats += in.checkFollowed(ctx, c, early)
	in.scanTree(ctx, c, snap, early)
	return snap
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
// directory due (one at a time: snapshotDepth), and
// a getChildren only for those whose children changed since their last
// listing; every RescanEvery snapshots (less often on a large tree), the
// walk from the scan roots, also gated by sameChildren and paced
// (Options.WalkRate). A directory becomes a candidate only when one of its
// children's names parses as a recipe node: the parents of ordinary
// ephemerals (registrations) and of watched config keys are never listed.
//
// Early snapshots (Run) come every earlyWait, four a poll interval: each
// re-reads only the directories not read within the last poll interval
// (the walk's new finds), and shows the others as last read, so that a
// start sends one exists per known directory a poll interval, as a steady
// poll does, not four (issue 26, finding 9: no start costs more than the
// steady polling).
func (in *Inspector) scanTree(ctx context.Context, c *zk.Conn, snap *Snapshot, early bool) {
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
	// Which directories are read now; the others are shown as last read
	// (reused): in an early snapshot those read within the last poll
	// interval, later the still ones not due yet (still.go).
	poll, limit := in.pollInterval(), in.stillCap()
	read, reused := make([]string, 0, len(dirs)), map[string]*listing{}
	before := map[string]*zk.Stat{} // the stat of each read directory's last listing
	for _, d := range dirs {
		l := st.listings[d]
		if l != nil && !l.denied {
			skip := early && snap.At.Sub(l.at) < poll
			if s := st.still[d]; !early && s != nil && in.mayWait(st, d) && !s.due(snap.At, poll) {
				skip = true
			}
			if skip {
				l.used, reused[d] = st.polls, l
				continue
			}
			before[d] = l.stat
		}
		read = append(read, d)
	}
	lists := in.listDirs(ctx, c, st.listings, st.polls, snapshotDepth, nil, read, &snap.Cost)
	for d, l := range reused {
		lists[d] = l
	}
	seen := map[anomalyKey]bool{}
	denied := slices.Clone(in.walker.denied)
	defer func() {
		for i, d := range denied {
			if r, ok := in.rel(d); ok {
				denied[i] = r
			}
		}
		snap.Unreadable, snap.Notices = unreadable(denied, snap.Notices, in.opts.Name)
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
		_, again := reused[dir]
		urgent := false // read it at the next poll, still or not
		names, stat := l.names, l.stat
		if st.kazooSems[dir] && (len(names) == 0 || kazooLeases(names)) {
			st.dirs[dir] = dirLock
			snap.Locks = append(snap.Locks, in.readKazooSemaphore(ctx, c, st, dir, names, &snap.Cluster, snap.At))
			continue
		}
		nodes, unrecognised := recipes.ParseChildren(names)
		switch kind := classify(nodes); {
		case again && st.dirs[dir] == dirQueue && st.queues[dir] != nil && st.queues[dir].last != nil:
			snap.Queues = append(snap.Queues, st.queues[dir].shownAgain(snap.At, l.at))
		case kind == dirLock:
			st.dirs[dir] = dirLock
			if sem, ok := strings.CutSuffix(dir, kazooSemaphoreLock); ok {
				st.kazooSems[sem] = true
				in.addCandidate(st, sem)
			}
			l := in.readLock(ctx, c, st, dir, nodes, unrecognised, owners, &snap.Cluster, snap.At, l.at)
			urgent = awaitingConfirmation(l, st.seen)
			if again && early {
				// Not read again, and judged from the same polls as the
				// snapshot before (early ones reread them): it confirms no
				// anomaly (two reads in a row must show one), and forgets
				// none. A still directory not read in a later snapshot is
				// judged against that snapshot's polls, like one read:
				// an anomaly it shows for the first time is recorded and
				// the directory read at the next poll (urgent), which
				// confirms it or not; one skipped at all is one whose
				// anomalies were all confirmed at its last evaluation.
				l.Anomalies = confirmAnomalies(l, st.seen, map[anomalyKey]bool{})
				for k := range st.seen {
					if k.dir == dir {
						seen[k] = true
					}
				}
			} else {
				l.Anomalies = confirmAnomalies(l, st.seen, seen)
			}
			snap.Locks = append(snap.Locks, l)
		case kind == dirQueue:
			if q, ok := in.readQueue(c, st, dir, nodes, stat, snap.At); ok {
				in.takenItems(ctx, c, &q, dir, snap.At)
				st.dirs[dir] = dirQueue
				q.ReadAt = l.at
				st.queues[dir].last, st.queues[dir].lastAt = &q, snap.At
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
				q := in.emptyQueue(st, dir, stat, snap.At)
				q.ReadAt = l.at
				st.queues[dir].last, st.queues[dir].lastAt = &q, snap.At
				snap.Queues = append(snap.Queues, q)
			case dirLock:
				snap.Locks = append(snap.Locks, Lock{Path: dir, Layout: "(free)", Unrecognised: unrecognised, ReadAt: l.at})
			}
		}
		if _, known := st.dirs[dir]; !known {
			continue
		}
		s := st.still[dir]
		if s == nil {
			s = &stillness{}
			st.still[dir] = s
		}
		if again {
			if urgent {
				s.read(snap.At, false, true, poll, limit)
			}
			continue
		}
		s.read(snap.At, sameStat(before[dir], stat), urgent, poll, limit)
	}
	st.seen = seen
	for d := range st.still {
		if _, ok := st.dirs[d]; !ok {
			delete(st.still, d)
		}
	}
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
func unreadable(dirs []string, notices []string, name func(string) string) ([]string, []string) {
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
	return dirs, append(notices, exit.Advice(name, "%d %s not readable: %s (ACL; see {auth}): locks and queues there are not shown", len(dirs), what, list))
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

// SystemNode reports whether p (a server path) is in ZooKeeper's own
// namespace, /zookeeper: every Curator client (its EnsembleTracker) and
// every client that follows reconfigurations watches /zookeeper/config,
// and a change there is meant to reach them all: many watchers on it are
// no herd to warn of (7 Curator sessions were flagged "! herd").
func SystemNode(p string) bool { return p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") }
