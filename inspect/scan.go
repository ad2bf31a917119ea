package inspect

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

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

// Run takes a snapshot every poll interval until ctx ends and sends each on
// the returned channel, which it closes at the end. A slow consumer delays
// the next snapshot; none is dropped.
func (in *Inspector) Run(ctx context.Context) <-chan *Snapshot {
	out := make(chan *Snapshot)
	go func() {
		defer close(out)
		tick := time.NewTicker(in.pollInterval())
		defer tick.Stop()
		for {
			snap := in.Snapshot(ctx)
			select {
			case out <- snap:
			case <-ctx.Done():
				return
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// Snapshot polls every member, merges their answers, and scans the tree for
// locks and queues. Problems become notices: a snapshot always comes back.
func (in *Inspector) Snapshot(ctx context.Context) *Snapshot {
	in.scanMu.Lock()
	defer in.scanMu.Unlock()
	now := time.Now()
	polls := in.poller.Poll(ctx)
	snap := &Snapshot{At: now, Cluster: mergePolls(now, polls)}
	snap.Cluster.Self = in.SessionID()
	for _, p := range polls {
		if p.Err != nil {
			snap.Notices = append(snap.Notices, fmt.Sprintf("member %s is down: %v", p.Addr, p.Err))
		}
	}
	if missing := missingCaps(snap.Cluster.Capabilities); missing != "" {
		snap.Notices = append(snap.Notices, missing)
	}
	c, err := in.conn(ctx)
	if err != nil {
		snap.Notices = append(snap.Notices, "no session: "+err.Error())
		return snap
	}
	in.scanTree(ctx, c, snap)
	return snap
}

// missingCaps summarises the capability probe in one line.
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
	s := fmt.Sprintf("unavailable: %v", cmds)
	if enable != "" {
		s += "; enable with: " + enable
	}
	return s + " (see Servers)"
}

// scanTree finds lock and queue directories and reads them.
func (in *Inspector) scanTree(ctx context.Context, c *zk.Conn, snap *Snapshot) {
	st := &in.scan
	if st.dirs == nil {
		st.dirs = map[string]dirKind{}
		st.stats = map[string]nodeInfo{}
		st.queues = map[string]*queueRec{}
	}
	every := in.opts.RescanEvery
	if every <= 0 {
		every = DefaultRescanEvery
	}
	if st.polls%every == 0 {
		if truncated := in.walk(ctx, c, st); truncated {
			snap.Notices = append(snap.Notices, fmt.Sprintf("tree scan stopped after %d directories; locks and queues deeper down may be missing", in.maxScanDirs()))
		}
	}
	st.polls++

	// Candidates the servers point at: parents of ephemeral nodes and of
	// watched nodes.
	owners := map[string]int64{}
	for _, s := range snap.Cluster.Sessions {
		for _, p := range s.Ephemerals {
			owners[p] = s.ID
			in.addCandidate(st, path.Dir(p))
		}
	}
	for _, w := range snap.Cluster.Watches {
		in.addCandidate(st, path.Dir(w.Path))
	}

	dirs := make([]string, 0, len(st.dirs))
	for d := range st.dirs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	seen := map[anomalyKey]bool{}
	for _, dir := range dirs {
		if ctx.Err() != nil {
			return
		}
		names, stat, err := c.Children(dir)
		if err != nil {
			if errors.Is(err, zk.ErrNoNode) {
				delete(st.dirs, dir)
				delete(st.queues, dir)
			}
			continue
		}
		nodes, unrecognised := recipes.ParseChildren(names)
		switch kind := classify(nodes); kind {
		case dirLock:
			st.dirs[dir] = dirLock
			l := in.readLock(ctx, c, st, dir, nodes, unrecognised, owners, &snap.Cluster, snap.At)
			l.Anomalies = confirmAnomalies(l, st.seen, seen)
			snap.Locks = append(snap.Locks, l)
		case dirQueue:
			if q, ok := in.readQueue(c, st, dir, nodes, stat, snap.At); ok {
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
	// Herds outside any lock directory: a node many sessions watch.
	snap.Locks = append(snap.Locks, in.looseHerds(snap, owners)...)
	// Forget cached stats of nodes gone from every listing.
	if len(st.stats) > 4*in.statLimit()*max(len(snap.Locks), 1) {
		clear(st.stats)
	}
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

// walk visits the tree breadth first from the scan roots, remembering every
// directory whose children parse as a recipe layout. It does not descend
// into recognised recipe nodes, nor into directories with more than
// MaxScanFanout children, and stops after MaxScanDirs listings.
func (in *Inspector) walk(ctx context.Context, c *zk.Conn, st *scanState) (truncated bool) {
	roots := in.opts.ScanRoots
	if len(roots) == 0 {
		roots = []string{"/"}
	}
	queue := make([]string, 0, len(roots))
	for _, r := range roots {
		queue = append(queue, in.abs(r))
	}
	fanout := in.opts.MaxScanFanout
	if fanout <= 0 {
		fanout = DefaultMaxScanFanout
	}
	limit := in.maxScanDirs()
	for visited := 0; len(queue) > 0; visited++ {
		if visited >= limit {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		dir := queue[0]
		queue = queue[1:]
		names, _, err := c.Children(dir)
		if err != nil {
			continue
		}
		nodes, unrecognised := recipes.ParseChildren(names)
		if classify(nodes) != dirNone {
			if _, ok := st.dirs[dir]; !ok {
				st.dirs[dir] = dirNone // classified when read
			}
		}
		if len(names) > fanout {
			continue
		}
		for _, name := range unrecognised {
			child := path.Join(dir, name)
			if child == "/zookeeper" {
				continue
			}
			queue = append(queue, child)
		}
	}
	return false
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
	return buildLock(lockInput{
		Dir:          dir,
		Nodes:        nodes,
		Unrecognised: unrecognised,
		Cluster:      cl,
		At:           at,
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

// statAll stats paths with a few requests in flight at once (go-zookeeper
// pipelines them on the one connection).
func statAll(ctx context.Context, c *zk.Conn, paths []string) map[string]nodeInfo {
	const workers = 16
	out := make(map[string]nodeInfo, len(paths))
	if len(paths) == 0 {
		return out
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		next = make(chan string)
	)
	for range min(workers, len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				ok, stat, err := c.Exists(p)
				if err != nil || !ok {
					continue
				}
				mu.Lock()
				out[p] = nodeInfo{Owner: stat.EphemeralOwner, Created: time.UnixMilli(stat.Ctime)}
				mu.Unlock()
			}
		}()
	}
	for _, p := range paths {
		if ctx.Err() != nil {
			break
		}
		next <- p
	}
	close(next)
	wg.Wait()
	return out
}

// readQueue samples a queue directory: depth, rates, head age. ok is false
// when the items are ephemeral (then it is not a queue). A head consumed
// since the listing does not make the queue vanish: the next items are
// tried, and a directory already known as a queue stays one.
func (in *Inspector) readQueue(c *zk.Conn, st *scanState, dir string, nodes []recipes.Node, stat *zk.Stat, at time.Time) (Queue, bool) {
	head, age := "", time.Duration(-1)
	for _, n := range nodes[:min(len(nodes), 8)] {
		headPath := path.Join(dir, n.Name)
		info, ok := st.stats[headPath]
		if !ok {
			exists, hs, err := c.Exists(headPath)
			if err != nil || !exists {
				continue // consumed since the listing
			}
			info = nodeInfo{Owner: hs.EphemeralOwner, Created: time.UnixMilli(hs.Ctime)}
			st.stats[headPath] = info
		}
		if info.Owner != 0 {
			return Queue{}, false
		}
		head, age = n.Name, max(at.Sub(info.Created), 0)
		break
	}
	if head == "" && st.dirs[dir] != dirQueue {
		return Queue{}, false
	}
	q := in.sampleQueue(st, dir, nodes, at)
	q.Layout = string(nodes[0].Layout)
	q.Head, q.HeadAge = head, age
	return q, true
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
		if len(w.Sessions) < herdMin || inLock[dir] {
			continue
		}
		if _, ok := in.rel(w.Path); !ok {
			continue
		}
		l := Lock{Path: w.Path, Layout: "watched node"}
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
		l.Anomalies = []Anomaly{{Kind: AnomalyHerd, Node: name,
			Detail: fmt.Sprintf("%d sessions watch %s: a change wakes them all", len(w.Sessions), w.Path)}}
		out = append(out, l)
	}
	return out
}
