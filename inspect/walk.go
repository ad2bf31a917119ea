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
