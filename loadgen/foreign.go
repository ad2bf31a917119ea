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
//   - a holder whose node it deleted while it held (it listed the node as
//     a waiter's, then the node was granted before its delete) lost the
//     lock: it must learn that too, by its release at the latest;
//   - two holders at once while a holder of either kind is inside, and
//     that holder's fenced writes, are the operator's doing (counted, not
//     violations);
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
	// held are the grants inside now, by node path (grant to exit), so
	// that a delete of a held node marks its holder; deleting is the node
	// whose delete is under way (at most one: the client acts in turn).
	held     map[string]*foreignHeld
	deleting string
	// Figures for the result.
	races, learnt, excused, deletedHeld int64
}

// foreignHeld is one grant inside, as the foreign client sees it.
type foreignHeld struct {
	dir   string
	token uint64
	// raced: the node was deleted while held, or its grant raced a
	// delete: the holder must learn it lost. pending: marked only because
	// a delete of it is under way (undone if the delete fails).
	raced, pending bool
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
		if s, ok := f.Kind.Spec(); ok {
			extra = max(extra, time.Duration(s.ReadLag)*f.Delay)
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
	if !r.injects() || !hasForeign(r.run.Faults) {
		return nil
	}
	opts := append(append([]recipes.SessionOption(nil), r.opts.SessionOptions...), recipes.WithSessionTimeout(r.run.SessionTimeout))
	sctx, cancel := context.WithTimeout(ctx, max(r.run.SessionTimeout, 5*time.Second))
	s, err := recipes.NewSession(sctx, r.opts.Servers, opts...)
	cancel()
	if err != nil {
		return fmt.Errorf("the foreign client's session: %w", err)
	}
	f := newForeigner(r, s)
	if f.dirs, f.leases, err = r.work.foreignTargets(); err != nil {
		s.Close()
		return err
	}
	r.fx.foreign = f
	return nil
}

func newForeigner(r *runner, s *recipes.Session) *foreigner {
	return &foreigner{
		r: r, s: s, leases: 1, race: raceWindow(r.run.Faults),
		rng:         rand.New(rand.NewPCG(r.run.Seed, 0x666f726569676e)),
		deleted:     make(map[string]time.Time),
		racedIn:     make(map[string]int),
		racedTokens: make(map[string]map[uint64]bool),
		items:       make(map[int64]bool),
		held:        make(map[string]*foreignHeld),
	}
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
	if f.r.run.Recipe.Spec().Items {
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
	if st.EphemeralOwner != 0 && !f.r.ownSession(st.EphemeralOwner) {
		// In a run spread over processes, only this process's clients
		// are the foreign client's: the others could not tell its doing
		// from a recipe's fault (queue items, persistent, are anyone's:
		// the item ledgers account for them).
		return faults.ForeignAct{}, nil
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
	// The node was listed as a waiter's, but it may be granted by now:
	// its holder is marked before the delete is sent, since the server
	// may hand the lock on before this client hears the reply.
	f.deleteStarted(p)
	err = conn.Delete(p, st.Version)
	switch {
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		f.deleteDone(p, 0, false)
		return faults.ForeignAct{}, nil
	case errors.Is(err, zk.ErrNoAuth):
		f.deleteDone(p, 0, false)
		act.Refused = true
		return act, nil
	case err != nil:
		// Unknown outcome (connection lost): taken as deleted, so that
		// its holder, if any, is held to learn it only if it is gone.
		f.deleteDone(p, st.Czxid, true)
		return faults.ForeignAct{}, fmt.Errorf("delete %s: %w", p, err)
	}
	if held := f.deleteDone(p, st.Czxid, true); held {
		act.What = strings.Replace(act.What, "waiter's node", "holder's node (listed as a waiter's)", 1)
	}
	if f.r.run.Recipe.Spec().Items {
		f.mu.Lock()
		if id, _, ok := parseItem(data); ok {
			f.items[id] = true
		}
		f.mu.Unlock()
	}
	return act, nil
}

// deleteStarted notes that a delete of node p is about to be sent: a
// holder of p, now or granted before the delete's outcome is known, has
// lost the lock (if the delete goes through) and may overlap the next one.
func (f *foreigner) deleteStarted(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleting = p
	if h := f.held[p]; h != nil && !h.raced {
		f.markRaced(h)
		h.pending = true
	}
}

// deleteDone notes the outcome of the delete of p (with the creation zxid
// czxid read before it); gone says it was applied (or may have been). It
// reports whether p was held when deleted: the foreign client took it for
// a waiter's node, and the holder must learn it lost the lock. A held
// node's creation zxid is its holder's fencing token (the recipes' token),
// which confirms that the node deleted is the one granted, not a namesake.
func (f *foreigner) deleteDone(p string, czxid int64, gone bool) (held bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleting = ""
	h := f.held[p]
	if h != nil && h.pending {
		h.pending = false
		if !gone {
			f.unmarkRaced(h) // the node is still there: still held
		}
	}
	if !gone {
		return false
	}
	f.deleted[p] = time.Now()
	if h == nil || (h.token != 0 && uint64(czxid) != h.token) {
		return false
	}
	f.markRaced(h)
	f.deletedHeld++
	return true
}

// markRaced marks a grant whose node was deleted: until it exits, overlaps
// on its lock and its fenced writes are the other client's doing. Called
// with f.mu held.
func (f *foreigner) markRaced(h *foreignHeld) {
	if h.raced {
		return
	}
	h.raced = true
	f.racedIn[h.dir]++
	if h.token != 0 {
		if f.racedTokens[h.dir] == nil {
			f.racedTokens[h.dir] = make(map[uint64]bool)
		}
		f.racedTokens[h.dir][h.token] = true
	}
}

// unmarkRaced undoes markRaced. Called with f.mu held.
func (f *foreigner) unmarkRaced(h *foreignHeld) {
	if !h.raced {
		return
	}
	h.raced = false
	f.racedIn[h.dir]--
	delete(f.racedTokens[h.dir], h.token)
}

// grant checks a grant of node (with fencing token, 0 for none),
// returned at granted, against the deletes, and follows the holder until
// exit (it leaves the critical section) and done (its release returned;
// learnt says whether it was told it lost the grant: Lost() closed, or
// Unlock said ErrLost). Both are nil when node is "".
//
// A grant of a node deleted before (longer ago than the race window) is a
// violation, noted here. A delete that raced the grant, is under way, or
// comes while the grant is inside (the client listed the node as a
// waiter's before it was granted: deleteDone) ends the grant: until exit,
// a second holder and the holder's fenced writes are the other client's
// doing; by done, the holder must have learnt it, else it is a violation.
func (f *foreigner) grant(node string, token uint64, granted time.Time) (exit func(), done func(learnt bool)) {
	if node == "" {
		return nil, nil
	}
	dir := node[:max(strings.LastIndexByte(node, '/'), 0)]
	h := &foreignHeld{dir: dir, token: token}
	exit = sync.OnceFunc(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if h.raced {
			f.racedIn[dir]--
		}
		if f.held[node] == h {
			delete(f.held, node)
		}
	})
	done = func(learnt bool) {
		f.mu.Lock()
		_, deleted := f.deleted[node]
		ended := h.raced && deleted
		if ended && learnt {
			f.learnt++
		}
		f.mu.Unlock()
		if ended && !learnt {
			f.r.chk.note("foreign delete", &f.r.chk.foreignGrant, "%s was deleted by another client as it was granted or while held, and its holder never learnt it (Lost() stayed open, Unlock succeeded)", node)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held[node] = h
	at, ok := f.deleted[node]
	switch {
	case f.deleting == node:
		f.markRaced(h)
		h.pending = true
	case !ok:
	case at.Before(granted.Add(-f.race)):
		f.r.chk.note("foreign delete", &f.r.chk.foreignGrant, "%s granted %v after another client deleted it", node, granted.Sub(at).Round(time.Millisecond))
	case !at.After(granted):
		f.races++
		f.markRaced(h)
	default:
		// Deleted after the grant returned, before it was registered
		// here: deleteDone found no holder.
		f.markRaced(h)
		f.deletedHeld++
	}
	return exit, done
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

// foreignResult is the foreign client's figures for Checks.
type foreignResult struct {
	racedGrants, excusedOverlaps, deletedHolders, deletedItems int64
}

// result returns the foreign client's figures.
func (f *foreigner) result() foreignResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return foreignResult{
		racedGrants:     f.races,
		excusedOverlaps: f.excused,
		deletedHolders:  f.deletedHeld,
		deletedItems:    int64(len(f.items)),
	}
}

// ownSession reports whether session id is one of this process's
// clients'; outside a run spread over processes every session is.
func (r *runner) ownSession(id int64) bool {
	if !r.opts.SharedNamespace {
		return true
	}
	for _, c := range r.clients {
		if s := c.session(); s != nil && s.ID() == id {
			return true
		}
	}
	return false
}
