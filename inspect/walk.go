package inspect

import (
	"context"
	"errors"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/recipes"
)

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
// time), and no sooner than walkAverageShare allows on a large tree. It
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
	// read is how many directories the walk in progress has read
	// (Snapshot.ScanRead while the first walk runs).
	read atomic.Int64
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
	spread := time.Since(w.started) >= time.Duration(w.lastUnits)*time.Second*walkAverageShare/time.Duration(in.walkRate())
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
	w.read.Store(0)
	go func() {
		defer w.wg.Done()
		defer cancel()
		w.done <- in.walk(wctx, c, w.listings, w.polls, func(dir string) {
			w.foundMu.Lock()
			w.found = append(w.found, dir)
			w.foundMu.Unlock()
		}, func(read int) { w.read.Store(int64(read)) })
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
		snap.Notices = append(snap.Notices, in.advice("tree scan stopped after %d directories; locks and queues deeper down may be missing (narrow it with {scan-root})", in.maxScanDirs()))
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

// walkChunk is how many directories of one level the walk lists before it
// reports what it found so far.
const walkChunk = 32

// The walk reads up to MaxScanDirs directories (a listing each the first
// time, then an exists each and a listing where the children changed)
// every RescanEvery snapshots. On the 205,000-znode server of
// BenchmarkInspectorCost the first walk lists about 190,000 names in about
// 2,000 requests (3,900 units), every later one about 2,000 exists.
//
// What a unit costs, and the pace (docs/BENCHMARKS.md, issue 24 and 26):
//   - A request costs the server about the same whatever it asks: on ZooKeeper
//     3.8 here an exists, a getChildren of an empty node and one of 1,000
//     children each took 80-145 µs of the server's CPU (srvr 100-280 µs,
//     mntr 0.9 ms on a small tree). So the walk's cost is its requests a
//     second. Names are charged too (namesPerUnit a unit: a 1,000-name
//     reply is 13 KB to send and decode), which slows the walk where
//     listings are large and costs nothing where they are small.
//   - Another client's p99 suffers from each request of ours that meets
//     one of its own at the server, not only from bursts: on a quiet
//     machine the slowest 1% of a steady writer's setData were spread
//     evenly over the seconds of an exporter window (first walk or not),
//     with its p99 up 1.4-1.6x at 28-40 of our requests a second (50
//     units a second for the walk, 20 exists a poll for the lock
//     directories). So the walk goes at DefaultWalkRate, 20 units a second: at
//     most 20 requests a second, about 2-3 ms of the server's CPU a second
//     (the benchmark's server spends 46 ms a second on its writer alone),
//     and one request at a time (treePacer.request), never a chunk.
//   - The price is time: the first walk of that tree takes about 200 s
//     (80 s at 50 units a second); until it ends, Snapshot.Scanning says
//     locks and queues may still be found (the Locks and Queues views say
//     "scanning the tree…" with the directories read so far, the exporter
//     zkherd_inspector_scan_complete 0), and the directories that sessions
//     own or watch by name show at once, without the walk.
//   - Where the assumption fails: a server whose requests cost much more
//     (a slow disk does not matter to reads; a server short of CPU does),
//     or a tree where the walk's 20 requests a second is much of all the
//     traffic; --scan-root narrows the walk there.
//
// The headless exporter walks at HeadlessWalkRate (package exporter):
// nobody waits at a terminal for its first walk, and a Prometheus scrapes
// every 15 s or more.
//
// A walk starts again only once the last one's units, spread since its
// start, average at most the walk rate / walkAverageShare a second (4 at
// the default rate): on a small tree every
// RescanEvery snapshots, on a 2,000-directory one every 500-1,000 s. At
// 10 a second (as before) the walks again and again cost a long-running
// exporter more than its polls: measured on the benchmark's tree, the
// headless exporter sent about 20 requests a second during a walk and
// 2.5-5 between (20 lock directories every 5 s, --scan-root limiting the
// walk to them), so a walk averaging 10 would have been two thirds of its
// requests. At 4 the walks cost what the polls do. What that costs: a
// directory that no session owns or watches by name (a queue whose items
// wait for a consumer not yet started) joins up to ~10 minutes after it
// appears on such a tree; the directories sessions own or watch join at
// the next poll, and a small tree is walked every RescanEvery snapshots.
const (
	walkDepth = pipelineDepth
	// DefaultWalkRate is the terminal inspector's Options.WalkRate.
	DefaultWalkRate  = 20
	walkAverageShare = 5
	namesPerUnit     = 100
)

// walkUnits is what a walk has cost so far, in the walk rate's units.
func walkUnits(c Cost) int { return c.Stats + c.Lists + c.Names/namesPerUnit }

// walk reads the tree from the scan roots; found is called with each
// recipe directory as it is found, progress with the directories read so
// far after each chunk.
func (in *Inspector) walk(ctx context.Context, c *zk.Conn, cache map[string]*listing, poll int, found func(dir string), progress func(read int)) (r walkResult) {
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
	for len(level) > 0 && ctx.Err() == nil {
		if r.visited+len(level) > limit {
			level, r.truncated = level[:limit-r.visited], true
		}
		var next []string
		for chunk := range slices.Chunk(level, walkChunk) {
			lists := in.listDirs(ctx, c, cache, poll, walkDepth, &in.pacer, chunk, &r.cost)
			r.visited += len(chunk)
			progress(r.visited)
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
	at    time.Time // when the names were listed or confirmed (sameChildren)
	used  int       // scanState.polls when last asked for
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

// snapshotDepth is how many of a snapshot's reads of the known lock and
// queue directories are in flight at once: one (issues 24 and 26).
//
// The headless exporter's still directories come due together (20 on
// BenchmarkInspectorCost's server, every 20 s), and 4 in flight made
// them a burst: another client's write that reached the server meanwhile
// waited behind up to 4 of ours. Writes that started in the 10 ms after
// one of those exists were among that client's slowest 1% 2.3 times as
// often as the others, against 1.0 times for the walk's requests, paced
// one at a time (docs/BENCHMARKS.md, "What still costs the tail").
//
// Assumption: one round trip per directory is short beside a poll
// interval: 20 directories cost 20 round trips (a few milliseconds on a
// LAN) instead of 5. Where it fails: thousands of changing directories
// behind a long round trip make a snapshot that much longer; the poll
// interval stretches with it (snapshots follow one another), they are
// not skipped. The stats of a changed directory's children still go
// pipelineDepth at a time (a new herd of 1,000 waiters is shown in 250
// round trips, not 1,000).
const snapshotDepth = 1

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
// first) since their cached listing. With a pacer, each request waits for
// its turn (the walk), after any search running (treePacer.yield);
// without, they go depth at a time (the snapshot's own directories). A
// directory that no longer exists maps
// to nil, one whose ACL denies the listing to a denied listing; one whose
// request failed otherwise is absent.
func (in *Inspector) listDirs(ctx context.Context, c *zk.Conn, cache map[string]*listing, poll, depth int, pace *treePacer, dirs []string, cost *Cost) map[string]*listing {
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
			if pace != nil {
				pace.yield(ctx)
				if pace.request(ctx); ctx.Err() != nil {
					return result{dir: dir}
				}
			}
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
				return result{dir: dir, l: &listing{names: cached.names, stat: stat, at: time.Now()}}
			}
		}
		if pace != nil {
			pace.yield(ctx)
			if pace.request(ctx); ctx.Err() != nil {
				return result{dir: dir}
			}
		}
		names, stat, err := c.Children(dir)
		if pace != nil {
			pace.names(len(names))
		}
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
		return result{dir: dir, l: &listing{names: names, stat: stat, at: time.Now()}}
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
