package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// foreigner is the other client of foreign-delete and foreign-write (an
// operator, a buggy service): a session of its own, straight to the
// servers, that deletes waiters' nodes and writes to holders' nodes of the
// run. It remembers what it deleted, so that the checks tell what it did
// from what a recipe did wrong:
//   - a grant to a waiter whose node it had deleted is a violation, unless
//     the delete raced the grant (within raceWindow) and the holder then
//     learnt it lost the grant (Lost() closed, or Unlock said ErrLost);
//   - two holders at once right after such a race, and a stale holder's
//     fenced writes, are the operator's doing (counted, not violations);
//   - a queue item it deleted is counted as deleted by another client,
//     not as lost.
type foreigner struct {
	r    *runner
	s    *recipes.Session
	dirs []string // where the run's contenders' nodes are
	// leases is how many contenders hold at once (semaphore leases; 1).
	leases int
	// race is the run's raceWindow.
	race time.Duration

	mu      sync.Mutex
	rng     *rand.Rand
	deleted map[string]time.Time // node path -> when its delete was acknowledged
	// racedIn counts, by lock directory, the holders inside whose grant
	// raced a delete of their node; racedTokens holds their fencing
	// tokens, by directory.
	racedIn     map[string]int
	racedTokens map[string]map[uint64]bool
	items       map[int64]bool // queue items deleted
	// Figures for the result.
	races, learnt, excused int64
}

// foreignRace is how long before a grant returned a delete of the
// granted node may have been acknowledged and still have raced the grant:
// the recipe read its node (or its predecessor's) before the delete and
// returned after it. A delete acknowledged earlier than that means the
// recipe granted a node already gone. The time covers scheduling delays
// on a loaded 2-core machine (a goroutine may wait that long for a CPU);
// raceWindow adds what the run's faults add (a lagging member serves
// reads that cannot see the delete yet).
const foreignRace = 250 * time.Millisecond

// raceWindow is foreignRace plus the longest a read can stay behind a
// write under faults: a lagging member's delay, or a delayed connection's
// round trip.
func raceWindow(fs []scenarios.Fault) time.Duration {
	var extra time.Duration
	for _, f := range fs {
		switch f.Kind {
		case scenarios.LagMember:
			extra = max(extra, f.Delay)
		case scenarios.DelayConnections:
			extra = max(extra, 2*f.Delay)
		}
	}
	return foreignRace + extra
}

// hasForeign reports whether the run's faults include foreign actions.
func hasForeign(fs []scenarios.Fault) bool {
	for _, f := range fs {
		if f.Kind.Foreign() {
			return true
		}
	}
	return false
}

// startForeign opens the foreign client's session when the faults need it.
func (r *runner) startForeign(ctx context.Context) error {
	if !r.hasFaults() || !hasForeign(r.run.Faults) {
		return nil
	}
	opts := append(append([]recipes.SessionOption(nil), r.opts.SessionOptions...), recipes.WithSessionTimeout(r.run.SessionTimeout))
	sctx, cancel := context.WithTimeout(ctx, max(r.run.SessionTimeout, 5*time.Second))
	s, err := recipes.NewSession(sctx, r.opts.Servers, opts...)
	cancel()
	if err != nil {
		return fmt.Errorf("the foreign client's session: %w", err)
	}
	f := &foreigner{
		r: r, s: s, leases: 1, race: raceWindow(r.run.Faults),
		rng:         rand.New(rand.NewPCG(r.run.Seed, 0x666f726569676e)),
		deleted:     make(map[string]time.Time),
		racedIn:     make(map[string]int),
		racedTokens: make(map[string]map[uint64]bool),
		items:       make(map[int64]bool),
	}
	switch r.run.Recipe {
	case scenarios.Queue:
		f.dirs = []string{r.ns + "/queue"}
	case scenarios.RWLock:
		f.dirs = pathsOf(r.ns, "rwlock", r.run.Locks)
	case scenarios.Semaphore:
		f.dirs = pathsOf(r.ns, "semaphore", r.run.Locks)
		f.leases = r.run.Semaphore.Leases
	case scenarios.Election:
		f.dirs = pathsOf(r.ns, "election", r.run.Locks)
	case scenarios.Barrier:
		s.Close()
		return fmt.Errorf("%w: foreign-delete and foreign-write act on waiters and holders, and a barrier has neither", ErrBadOptions)
	default:
		f.dirs = pathsOf(r.ns, "lock", r.run.Locks)
	}
	r.fx.foreign = f
	return nil
}

// closeForeign closes the foreign client's session.
func (r *runner) closeForeign() {
	if r.fx != nil && r.fx.foreign != nil {
		r.fx.foreign.s.Close()
	}
}

// Act implements faults.Foreign.
func (f *foreigner) Act(ctx context.Context, kind scenarios.FaultKind) (faults.ForeignAct, error) {
	conn := f.s.Conn()
	f.mu.Lock()
	dir := f.dirs[f.rng.IntN(len(f.dirs))]
	f.mu.Unlock()
	names, _, err := conn.Children(dir)
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return faults.ForeignAct{}, nil
		}
		return faults.ForeignAct{}, fmt.Errorf("list %s: %w", dir, err)
	}
	var cands []string
	what := ""
	if f.r.run.Recipe == scenarios.Queue {
		claimed := map[string]bool{}
		for _, n := range names {
			if item, ok := strings.CutSuffix(n, recipes.ClaimSuffix); ok {
				claimed[item] = true
			}
		}
		for _, n := range names {
			isClaim := strings.HasSuffix(n, recipes.ClaimSuffix)
			switch {
			case kind == scenarios.ForeignDelete && !isClaim && !claimed[n]:
				cands, what = append(cands, n), "queue item"
			case kind == scenarios.ForeignWrite && isClaim:
				cands, what = append(cands, n), "consumer's claim"
			}
		}
	} else {
		nodes, _ := recipes.ParseChildren(names)
		for i, n := range nodes {
			holds := recipes.Holds(nodes, i, f.leases)
			if holds == (kind == scenarios.ForeignWrite) {
				cands = append(cands, n.Name)
			}
		}
		what = "waiter's node of " + lastElem(dir)
		if kind == scenarios.ForeignWrite {
			what = "holder's node of " + lastElem(dir)
		}
	}
	if len(cands) == 0 {
		return faults.ForeignAct{}, nil
	}
	f.mu.Lock()
	p := dir + "/" + cands[f.rng.IntN(len(cands))]
	f.mu.Unlock()
	data, st, err := conn.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return faults.ForeignAct{}, nil
	}
	if err != nil {
		return faults.ForeignAct{}, fmt.Errorf("read %s: %w", p, err)
	}
	act := faults.ForeignAct{Path: p, What: what}
	if kind == scenarios.ForeignWrite {
		// What Curator's Revoker writes to ask a holder to let go.
		_, err := conn.Set(p, []byte("__REVOKE__"), st.Version)
		switch {
		case errors.Is(err, zk.ErrNoAuth):
			act.Refused = true
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
			return faults.ForeignAct{}, nil
		case err != nil:
			return faults.ForeignAct{}, fmt.Errorf("write %s: %w", p, err)
		}
		return act, nil
	}
	err = conn.Delete(p, st.Version)
	switch {
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return faults.ForeignAct{}, nil
	case errors.Is(err, zk.ErrNoAuth):
		act.Refused = true
		return act, nil
	case err != nil:
		return faults.ForeignAct{}, fmt.Errorf("delete %s: %w", p, err)
	}
	f.mu.Lock()
	f.deleted[p] = time.Now()
	if f.r.run.Recipe == scenarios.Queue {
		if id, _, ok := parseItem(data); ok {
			f.items[id] = true
		}
	}
	f.mu.Unlock()
	return act, nil
}

// grant checks a grant of node (with fencing token, 0 for none),
// returned at granted, against the deletes: raced is set when the node's
// delete raced the grant (the holder must then learn it lost it, and
// holders that overlap it meanwhile are the other client's doing, until
// exit); a grant of a node deleted before is a violation, noted here.
func (f *foreigner) grant(node string, token uint64, granted time.Time) (raced bool, exit func()) {
	if node == "" {
		return false, nil
	}
	dir := node[:max(strings.LastIndexByte(node, '/'), 0)]
	f.mu.Lock()
	at, ok := f.deleted[node]
	if !ok || at.After(granted) {
		f.mu.Unlock()
		return false, nil
	}
	if at.Before(granted.Add(-f.race)) {
		f.mu.Unlock()
		f.r.chk.note("foreign delete", &f.r.chk.foreignGrant, "%s granted %v after another client deleted it", node, granted.Sub(at).Round(time.Millisecond))
		return false, nil
	}
	f.races++
	f.racedIn[dir]++
	if token != 0 {
		if f.racedTokens[dir] == nil {
			f.racedTokens[dir] = make(map[uint64]bool)
		}
		f.racedTokens[dir][token] = true
	}
	f.mu.Unlock()
	return true, sync.OnceFunc(func() {
		f.mu.Lock()
		f.racedIn[dir]--
		f.mu.Unlock()
	})
}

// released checks a raced grant's end: the holder must have learnt that
// its node was gone.
func (f *foreigner) released(node string, learnt bool) {
	if learnt {
		f.mu.Lock()
		f.learnt++
		f.mu.Unlock()
		return
	}
	f.r.chk.note("foreign delete", &f.r.chk.foreignGrant, "%s was deleted by another client as it was granted, and its holder never learnt it (Lost() stayed open, Unlock succeeded)", node)
}

// excuse reports whether two holders at once on lock dir are the other
// client's doing: a holder whose grant raced a delete of its node is
// inside. It counts the excused overlap.
func (f *foreigner) excuse(dir string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.racedIn[dir] <= 0 {
		return false
	}
	f.excused++
	return true
}

// excuseStale reports whether a stale holder's fenced writes on lock dir,
// with token, come from a grant that raced a delete of its node.
func (f *foreigner) excuseStale(dir string, token uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.racedTokens[dir][token] {
		return false
	}
	f.excused++
	return true
}

// deletedItem reports whether the foreign client deleted queue item id.
func (f *foreigner) deletedItem(id int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.items[id]
}

// result adds the foreign client's figures to res.
func (f *foreigner) result(res *Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &res.Checks
	c.ForeignRacedGrants, c.ForeignExcusedOverlaps = f.races, f.excused
	c.ForeignDeletedItems = int64(len(f.items))
}
