package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// A workload is what the clients of one recipe do. The runner owns the
// sessions, the clock and the checks; the workload owns the recipe calls.
type workload interface {
	// mainPhase is the latency the progress line shows.
	mainPhase() metrics.Phase
	// extraPhases are phases beyond metrics.Phases the workload records.
	extraPhases() []metrics.Phase
	// recvBuffer is the receive buffer a client session needs: the largest
	// reply it can get (a directory listing, mostly).
	recvBuffer() int
	// slotOf is which lock, role or group client i belongs to.
	slotOf(i int) int
	// prepare creates what the clients share, under the namespace.
	prepare(ctx context.Context, conn *zk.Conn) error
	// loop runs client c's operations until the run stops.
	loop(c *client)
	// sample is called once per interval by the ticker (queue depth).
	sample()
	// depth is the current queue depth, 0 for other recipes.
	depth() int64
	// model is the oracle's sequential model of the recipe and its
	// parameter (oracle.Check).
	model() (name string, limit int)
	// foreignTargets are the directories a foreign client deletes or
	// writes nodes in (foreign-delete, foreign-write faults) and how many
	// of a directory's first nodes hold; an error when the recipe has
	// no such nodes.
	foreignTargets() (dirs []string, holders int, err error)
	// finish runs once every loop has returned, before the leftover check:
	// final checks that need the servers. It returns the workload's part
	// of the Result.
	finish(ctx context.Context, conn *zk.Conn) workResult
}

// workResult is a workload's part of the Result, from its finish.
type workResult struct {
	// queueDepth is Result.QueueDepth.
	queueDepth []int64
	// notes go to Result.Notes, warnings to Checks.Warnings.
	notes, warnings []string
	// lostItems, duplicateItems and unconsumed are the queue's checks
	// (Checks.LostItems, DuplicateItems, Unconsumed).
	lostItems, duplicateItems, unconsumed int64
	// notChecked goes to Checks.NotChecked: checks the workload could not
	// make.
	notChecked []string
	// ledger is Result.QueueItems (a queue shared with other processes).
	ledger *QueueLedger
}

// workloads builds each recipe's workload: the one table a recipe's
// workload is registered in (its other properties are its
// scenarios.RecipeSpec).
var workloads = map[scenarios.Recipe]func(r *runner) (workload, error){
	scenarios.FairLock:     func(r *runner) (workload, error) { return newLockWork(r), nil },
	scenarios.HerdLock:     func(r *runner) (workload, error) { return newLockWork(r), nil },
	scenarios.HerdChildren: func(r *runner) (workload, error) { return newLockWork(r), nil },
	scenarios.RWLock:       func(r *runner) (workload, error) { return newRWWork(r), nil },
	scenarios.Semaphore:    func(r *runner) (workload, error) { return newSemWork(r), nil },
	scenarios.Election:     func(r *runner) (workload, error) { return newElectionWork(r), nil },
	scenarios.Barrier:      func(r *runner) (workload, error) { return newBarrierWork(r) },
	scenarios.Queue:        func(r *runner) (workload, error) { return newQueueWork(r) },
}

func newWorkload(r *runner) (workload, error) {
	if w, ok := workloads[r.run.Recipe]; ok {
		return w(r)
	}
	return nil, fmt.Errorf("%w: recipe %s is not supported by the load generator", ErrBadOptions, r.run.Recipe)
}

// pathsOf names n directories under the namespace: base-000, base-001...
func pathsOf(ns, base string, n int) []string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/%s-%03d", ns, base, i)
	}
	return paths
}

// createDirs creates the shared directories before any client starts, so
// a thousand first contenders do not all race to create them.
func createDirs(conn *zk.Conn, paths []string) error {
	for _, p := range paths {
		if _, err := conn.Create(p, nil, 0, openACL); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return nil
}

// clientsPer is the most clients any of n slots gets with round-robin
// assignment.
func clientsPer(clients, n int) int { return (clients + n - 1) / max(n, 1) }

// seqOf returns the sequence number of a recipe node path, -1 if none.
func seqOf(node string) int64 {
	n, ok := recipes.ParseNode(node[strings.LastIndexByte(node, '/')+1:])
	if !ok {
		return -1
	}
	return n.Seq
}

// lockWork drives the three mutual-exclusion locks.
type lockWork struct {
	r       *runner
	paths   []string
	guards  []*lockGuard
	newLock func(s *recipes.Session, path string) recipes.Locker
	graph   graphState // kept from one wait graph to the next
	// handOff is the fair lock's hand-off (a recipes.HandOff), reported
	// in the run's notes.
	handOff atomic.Uint32
}

func newLockWork(r *runner) *lockWork {
	w := &lockWork{r: r, paths: pathsOf(r.ns, r.run.Recipe.Spec().Base, r.run.Locks)}
	for _, p := range w.paths {
		w.guards = append(w.guards, &lockGuard{path: p, fifo: r.run.Recipe.Spec().FIFO})
	}
	switch {
	case r.opts.NewLocker != nil:
		w.newLock = r.opts.NewLocker
	case r.run.Recipe == scenarios.HerdLock:
		w.newLock = func(s *recipes.Session, p string) recipes.Locker {
			return recipes.NewHerdLock(s, p, r.lockOptions()...)
		}
	case r.run.Recipe == scenarios.HerdChildren:
		w.newLock = func(s *recipes.Session, p string) recipes.Locker {
			return recipes.NewHerdChildrenLock(s, p, r.lockOptions()...)
		}
	default:
		w.newLock = func(s *recipes.Session, p string) recipes.Locker { return recipes.NewLock(s, p, r.lockOptions()...) }
	}
	return w
}

func (w *lockWork) mainPhase() metrics.Phase     { return metrics.Acquire }
func (w *lockWork) extraPhases() []metrics.Phase { return nil }
func (w *lockWork) slotOf(i int) int             { return w.r.run.LockFor(i) }
func (w *lockWork) sample()                      {}
func (w *lockWork) depth() int64                 { return 0 }
func (w *lockWork) model() (string, int)         { return oracle.Mutex, 0 }
func (w *lockWork) foreignTargets() ([]string, int, error) {
	return w.paths, 1, nil
}
func (w *lockWork) finish(context.Context, *zk.Conn) workResult {
	switch h := recipes.HandOff(w.handOff.Load()); h {
	case recipes.HandOffMark:
		return workResult{notes: []string{"fair-lock hand-off: release-mark (no listing per hand-off)"}}
	case recipes.HandOffListing:
		return workResult{notes: []string{"fair-lock hand-off: listing (the servers do not enforce owner-only ACLs: skipACL, a super user or another digest algorithm)"}}
	}
	return workResult{}
}

func (w *lockWork) recvBuffer() int {
	switch {
	case w.r.opts.NewLocker != nil:
		// Another lock implementation: it lists over its own session.
		return childListBuffer(clientsPer(w.r.run.Clients, len(w.paths)))
	case w.r.run.Recipe == scenarios.HerdLock:
		// One fixed node, never a listing.
		return smallRecvBuffer
	case w.listerBuffer() > 0:
		return smallRecvBuffer
	}
	return childListBuffer(clientsPer(w.r.run.Clients, len(w.paths)))
}

// listerBuffer: the fair lock's listings carry no watch, so they go
// through the run's Lister and its clients' buffers stay small whatever
// the queue's length; the herd-children lock's waiters each need their
// own child watch, whose reply is the listing.
func (w *lockWork) listerBuffer() int {
	if w.r.run.Recipe != scenarios.FairLock || w.r.opts.NewLocker != nil {
		return 0
	}
	return childListBuffer(clientsPer(w.r.run.Clients, len(w.paths)))
}

func (w *lockWork) prepare(_ context.Context, conn *zk.Conn) error {
	return createDirs(conn, w.paths)
}

func (w *lockWork) loop(c *client) {
	r := w.r
	g := w.guards[c.slot]
	r.holdLoop(c, g, func(s *recipes.Session) acquirer {
		l := w.newLock(s, g.path)
		return func(ctx context.Context) (held, error) {
			if err := l.Lock(ctx); err != nil {
				return held{}, err
			}
			if h, ok := l.(interface{ HandOff() recipes.HandOff }); ok {
				w.handOff.Store(uint32(h.HandOff()))
			}
			return held{
				release:   l.Unlock,
				lost:      l.Lost(),
				enter:     func() { g.enterExclusive(&r.chk, l.FencingToken(), seqOf(l.Node())) },
				exit:      g.exitExclusive,
				token:     l.FencingToken,
				node:      l.Node,
				stillHeld: func() bool { return l.Node() != "" },
			}, nil
		}
	})
}

// isClosed reports whether ch is closed (nil: no).
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// An acquirer is one client's handle on a lock, lease or election, bound
// to one session: it blocks until held or ctx ends.
type acquirer func(ctx context.Context) (held, error)

// held is one grant: how to release it, its lost signal, and the check
// hooks to run on entering and leaving the critical section.
type held struct {
	release     func(context.Context) error
	lost        <-chan struct{}
	enter, exit func()
	// phase, if set, also records the acquire latency (read_acquire...).
	phase metrics.Phase
	// token, if set, is the grant's fencing token, written to the lock's
	// guarded resource (faults.go).
	token func() uint64
	// node, if set, is the granted node's path, checked against another
	// client's deletes (foreign.go).
	node func() string
	// stillHeld, if set, says whether the grant is still held after a
	// failed release (runner.release): a lock's Unlock keeps a grant
	// whose delete it could not confirm, for a later Unlock.
	stillHeld func() bool
}

// nodeOf names a grant's node for messages.
func nodeOf(h held) string {
	if h.node != nil {
		return h.node()
	}
	return "a grant"
}

// holdLoop is the client loop of every acquire-hold-release recipe: it
// waits for its turn (arrival model), acquires, checks, holds for a drawn
// time, releases, and records every phase. bind makes the handle for a
// session (again after an expired session was replaced).
func (r *runner) holdLoop(c *client, g *lockGuard, bind func(*recipes.Session) acquirer) {
	sampler := scenarios.NewSampler(r.run.Hold, r.run.Seed, uint64(c.idx))
	var (
		acquire acquirer
		bound   *recipes.Session
		part    int32
	)
	if g != nil {
		part = r.hist.Partition(g.path)
	}
	for first := true; ; first = false {
		intended, ok := r.next(first)
		if !ok {
			return
		}
		s := r.session(c)
		if s == nil {
			return
		}
		if s != bound {
			acquire, bound = bind(s), s
		}
		start := time.Now()
		c.tap.seen.begin(start)
		h, err := acquire(r.opCtx)
		if err != nil {
			c.hist.Add(oracle.Acquire, part, start, time.Now(), oracle.Unknown, oracle.NoValue)
			c.tap.seen.rest()
			r.opFailed(err)
			continue
		}
		granted := time.Now()
		acqKind, relKind := h.acquireKinds()
		c.hist.Add(acqKind, part, start, granted, oracle.OK, h.serverValue())
		c.tap.seen.hold(granted)
		var (
			foreignExit func()
			foreignDone func(learnt bool)
		)
		if f := r.fx.foreignClient(); f != nil && h.node != nil {
			var token uint64
			if h.token != nil {
				token = h.token()
			}
			foreignExit, foreignDone = f.grant(h.node(), token, granted)
		}
		counted := r.opDone(func() {
			r.recordAcquire(c, metrics.Acquire, start, intended, granted)
			if h.phase != "" {
				r.recordAcquire(c, h.phase, start, intended, granted)
			}
			if g != nil {
				if d, ok := g.handoff(start, granted); ok {
					c.shard.Record(metrics.Handoff, d)
				}
			}
		})
		if c.pause != nil && h.exit != nil {
			h.exit = sync.OnceFunc(h.exit) // parkIfPaused may call it first
		}
		pauses := c.pauses.Load()
		c.holding.Store(true)
		if h.enter != nil {
			h.enter()
		}
		var occExit func()
		if r.occ != nil && g != nil {
			mode := occWrite
			if h.phase == ReadAcquire {
				mode = occRead
			}
			node := ""
			if h.node != nil {
				node = h.node()
			}
			occExit = r.occ.enter(&r.chk, s, g.path, c.idx, mode, node)
		}
		gs := r.granted(c, &h, s, part)
		var lost bool
		if counted {
			lost = r.holdGrant(gs, &h, sampler.Next())
		}
		r.parkIfPaused(c, &h)
		relStart := time.Now()
		r.leaving(gs, &h)
		c.tap.seen.releasing()
		if h.exit != nil {
			h.exit()
		}
		// After the in-process guard (the record's removal may wait for a
		// reconnection), before the release.
		if occExit != nil {
			occExit()
		}
		if foreignExit != nil {
			foreignExit()
		}
		if g != nil {
			g.released(relStart)
		}
		// Whether the holder was told it lost the grant, read before the
		// release: a lock's Lost() closes when Unlock releases the grant,
		// so read after it, every release looked lost (called at the grant,
		// which let the oracle linearize any overlap) and every holder
		// whose node another client deleted looked told.
		told := lost || isClosed(h.lost)
		// Held across a pause: one began before the release did. A pause
		// that lands in the release leaves its outcome to the release: a
		// delete the server applied before the session expired released
		// the grant for good, and nil is the truth.
		pausedHolding, node := c.pauses.Load() != pauses, nodeOf(h)
		err = r.release(s, h.release, h.stillHeld)
		c.holding.Store(false)
		if pausedHolding {
			r.grantPaused(s, node, err)
		}
		recordRelease(c.hist, relKind, part, gs, granted, relStart, told, err)
		c.tap.seen.rest()
		if counted {
			c.shard.Record(metrics.Hold, relStart.Sub(granted))
			c.shard.Record(metrics.Release, time.Since(relStart))
			r.counts.Add(figures.Releases, 1)
		}
		if foreignDone != nil {
			foreignDone(told || errors.Is(err, recipes.ErrLost))
		}
		switch {
		case lost:
			r.opFailed(fmt.Errorf("held: %w", recipes.ErrLost))
		case err != nil:
			r.opFailed(err)
		}
	}
}
