package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// Phases beyond metrics.Phases that some workloads record.
const (
	ReadAcquire  metrics.Phase = "read_acquire"
	WriteAcquire metrics.Phase = "write_acquire"
	BarrierLeave metrics.Phase = "barrier_leave"
)

// simple holds what the acquire-hold-release workloads share.
type simple struct {
	r      *runner
	paths  []string
	guards []*lockGuard
}

func newSimple(r *runner, fifo bool) simple {
	s := simple{r: r, paths: pathsOf(r.ns, r.run.Recipe.Spec().Base, r.run.Locks)}
	for _, p := range s.paths {
		s.guards = append(s.guards, &lockGuard{path: p, fifo: fifo})
	}
	return s
}

func (s *simple) mainPhase() metrics.Phase                    { return metrics.Acquire }
func (s *simple) extraPhases() []metrics.Phase                { return nil }
func (s *simple) slotOf(i int) int                            { return s.r.run.LockFor(i) }
func (s *simple) sample()                                     {}
func (s *simple) depth() int64                                { return 0 }
func (s *simple) finish(context.Context, *zk.Conn) workResult { return workResult{} }
func (s *simple) recvBuffer() int {
	return childListBuffer(clientsPer(s.r.run.Clients, len(s.paths)))
}
func (s *simple) prepare(_ context.Context, conn *zk.Conn) error { return createDirs(conn, s.paths) }
func (s *simple) foreignTargets() ([]string, int, error)         { return s.paths, 1, nil }

// rwWork drives the read/write lock: each operation reads with the
// scenario's read ratio, else writes.
type rwWork struct{ simple }

func newRWWork(r *runner) *rwWork { return &rwWork{newSimple(r, false)} }

func (w *rwWork) model() (string, int) { return oracle.RWLock, 0 }

func (w *rwWork) extraPhases() []metrics.Phase { return []metrics.Phase{ReadAcquire, WriteAcquire} }

func (w *rwWork) loop(c *client) {
	r := w.r
	g := w.guards[c.slot]
	ratio := r.run.RWLock.ReadRatio
	rng := rand.New(rand.NewPCG(r.run.Seed, uint64(c.idx)^0x5bd1e995))
	r.holdLoop(c, g, func(s *recipes.Session) acquirer {
		rw := recipes.NewRWLock(s, g.path)
		return func(ctx context.Context) (held, error) {
			if rng.Float64() < ratio {
				l := rw.ReadLock()
				if err := l.Lock(ctx); err != nil {
					return held{}, err
				}
				return held{release: l.Unlock, lost: l.Lost(), phase: ReadAcquire, node: l.Node,
					stillHeld: func() bool { return l.Node() != "" },
					enter:     func() { g.enterShared(&r.chk) }, exit: g.exitShared}, nil
			}
			l := rw.WriteLock()
			if err := l.Lock(ctx); err != nil {
				return held{}, err
			}
			return held{release: l.Unlock, lost: l.Lost(), phase: WriteAcquire, node: l.Node,
				stillHeld: func() bool { return l.Node() != "" },
				enter:     func() { g.enterWriter(&r.chk) }, exit: g.exitExclusive}, nil
		}
	})
}

// semWork drives the semaphore.
type semWork struct {
	simple
	limits []*limitGuard
}

func newSemWork(r *runner) *semWork {
	w := &semWork{simple: newSimple(r, false)}
	for _, p := range w.paths {
		w.limits = append(w.limits, &limitGuard{what: p, limit: int32(r.run.Semaphore.Leases),
			kind: "semaphore limit", counter: func(c *checker) *atomic.Int64 { return &c.overIssued }})
	}
	return w
}

func (w *semWork) model() (string, int) { return oracle.Semaphore, w.r.run.Semaphore.Leases }
func (w *semWork) foreignTargets() ([]string, int, error) {
	return w.paths, w.r.run.Semaphore.Leases, nil
}

func (w *semWork) prepare(_ context.Context, conn *zk.Conn) error {
	n := []byte(strconv.Itoa(w.r.run.Semaphore.Leases))
	for _, p := range w.paths {
		_, err := conn.Create(p, n, 0, openACL)
		if errors.Is(err, zk.ErrNodeExists) && w.r.opts.SharedNamespace {
			continue // another process of the run created it
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return nil
}

func (w *semWork) loop(c *client) {
	r := w.r
	g, lim := w.guards[c.slot], w.limits[c.slot]
	r.holdLoop(c, g, func(s *recipes.Session) acquirer {
		sem := recipes.NewSemaphore(s, g.path, r.run.Semaphore.Leases)
		return func(ctx context.Context) (held, error) {
			l, err := sem.Acquire(ctx)
			if err != nil {
				return held{}, err
			}
			return held{release: l.Release, lost: l.Lost(), node: l.Node,
				enter: func() { lim.enter(&r.chk) }, exit: lim.exit}, nil
		}
	})
}

// electionWork drives leader election: a candidate that wins leads for a
// drawn time, resigns, and runs again.
type electionWork struct{ simple }

func newElectionWork(r *runner) *electionWork {
	return &electionWork{newSimple(r, true)}
}

func (w *electionWork) model() (string, int) { return oracle.Election, 0 }

func (w *electionWork) loop(c *client) {
	r := w.r
	g := w.guards[c.slot]
	value := []byte(fmt.Sprintf("client-%d", c.idx))
	r.holdLoop(c, g, func(s *recipes.Session) acquirer {
		e := recipes.NewElection(s, g.path, r.lockOptions()...)
		return func(ctx context.Context) (held, error) {
			if err := e.Campaign(ctx, value); err != nil {
				return held{}, err
			}
			return held{release: e.Resign, lost: e.Lost(),
				enter: func() { g.enterLeader(&r.chk, e.FencingToken(), seqOf(e.Node())) },
				exit:  g.exitExclusive, token: e.FencingToken, node: e.Node}, nil
		}
	})
}

// barrierWork drives double barriers: clients meet in groups of Size, each
// round on a fresh path (a path serves one round at a time), enter
// together, work, and leave together.
//
// In a run spread over processes (Options.Processes), the groups span the
// processes: client i of process p is the run's client i*Processes+p, and
// groups are made of consecutive clients of the run, so each group holds
// clients of several processes. Each arrival then also leaves a record
// (arrivalDir) that the group's clients count once they entered: the
// barrier must open for the whole group, whichever process its clients
// are in.
type barrierWork struct {
	r      *runner
	size   int
	groups []*barrierGroup
	// procs and proc place this process's clients in the run's (1 and 0
	// in a run of one process).
	procs, proc int
}

type barrierGroup struct {
	dir string
	// local is how many of the group's clients are this process's.
	local int
	mu    sync.Mutex
	// arrivals and departures per round, for the checks.
	rounds map[int]*[2]int
}

func newBarrierWork(r *runner) (*barrierWork, error) {
	size := r.run.Barrier.Size
	if size < 1 || r.run.Clients%size != 0 {
		return nil, fmt.Errorf("%w: barrier size %d must divide the %d clients", ErrBadOptions, size, r.run.Clients)
	}
	w := &barrierWork{r: r, size: size, procs: 1}
	if r.opts.SharedNamespace && r.opts.Processes > 1 {
		w.procs, w.proc = r.opts.Processes, r.opts.Process
	}
	for _, p := range pathsOf(r.ns, r.run.Recipe.Spec().Base, r.run.Clients*w.procs/size) {
		w.groups = append(w.groups, &barrierGroup{dir: p, rounds: make(map[int]*[2]int)})
	}
	for i := range r.run.Clients {
		w.groups[w.slotOf(i)].local++
	}
	return w, nil
}

// global is client i's number in the run, over every process.
func (w *barrierWork) global(i int) int { return i*w.procs + w.proc }

func (w *barrierWork) mainPhase() metrics.Phase                    { return metrics.BarrierWait }
func (w *barrierWork) extraPhases() []metrics.Phase                { return []metrics.Phase{BarrierLeave} }
func (w *barrierWork) slotOf(i int) int                            { return w.global(i) / w.size }
func (w *barrierWork) sample()                                     {}
func (w *barrierWork) depth() int64                                { return 0 }
func (w *barrierWork) finish(context.Context, *zk.Conn) workResult { return workResult{} }
func (w *barrierWork) recvBuffer() int                             { return childListBuffer(w.size) }
func (w *barrierWork) model() (string, int)                        { return oracle.Barrier, w.size }
func (w *barrierWork) foreignTargets() ([]string, int, error) {
	return nil, 0, fmt.Errorf("%w: foreign-delete and foreign-write act on waiters and holders, and a barrier has neither", ErrBadOptions)
}
func (w *barrierWork) prepare(_ context.Context, conn *zk.Conn) error {
	var dirs []string
	for _, g := range w.groups {
		dirs = append(dirs, g.dir)
		if w.procs > 1 {
			dirs = append(dirs, arrivalDir(g.dir))
		}
	}
	return createDirs(conn, dirs)
}

// note counts an arrival (i=0) or departure (i=1) in round k and returns
// the counter to check after passing.
func (g *barrierGroup) note(k, i, delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	rc, ok := g.rounds[k]
	if !ok {
		rc = new([2]int)
		g.rounds[k] = rc
	}
	rc[i] += delta
}

func (g *barrierGroup) count(k, i int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rc, ok := g.rounds[k]; ok {
		return rc[i]
	}
	return 0
}

func (g *barrierGroup) forget(k int) {
	g.mu.Lock()
	delete(g.rounds, k-2)
	g.mu.Unlock()
}

func (w *barrierWork) loop(c *client) {
	r := w.r
	g := w.groups[c.slot]
	leader := w.global(c.idx)%w.size == 0 // counts the group's rounds
	part := r.hist.Partition(g.dir)
	sampler := scenarios.NewSampler(r.run.Hold, r.run.Seed, uint64(c.idx))
	// With an operation count, every group runs its share of rounds.
	maxRounds := -1
	if ops := r.run.Ops; ops > 0 {
		maxRounds = int((ops + uint64(len(w.groups)) - 1) / uint64(len(w.groups)))
	}
	for round, first := 0, true; round != maxRounds; round, first = round+1, false {
		intended, ok := r.nextOp(first, false)
		if !ok {
			return
		}
		s := r.session(c)
		if s == nil {
			return
		}
		b := recipes.NewDoubleBarrier(s, fmt.Sprintf("%s/round-%d", g.dir, round), w.size)
		g.note(round, 0, 1)
		arrival := w.arrive(s, g, round, c.idx)
		start := time.Now()
		if err := b.Enter(r.opCtx); err != nil {
			c.hist.Add(oracle.Arrive, part, start, time.Now(), oracle.Unknown, int64(round))
			g.note(round, 0, -1)
			arrival.remove(&r.chk, 2*r.run.SessionTimeout)
			r.opFailed(err)
			return // the group's rounds are out of step now; this client is done
		}
		entered := time.Now()
		c.hist.Add(oracle.Arrive, part, start, entered, oracle.OK, int64(round))
		c.hist.Add(oracle.Entered, part, entered, entered, oracle.OK, int64(round))
		if n := g.count(round, 0); n < g.local {
			r.chk.note("barrier", &r.chk.mutex, "%s round %d: entered with %d of %d arrived", g.dir, round, n, g.local)
		}
		arrival.check(&r.chk, w.size)
		counted := !r.stopping()
		if counted {
			r.recordAcquire(c, metrics.BarrierWait, start, intended, entered)
			r.hold(sampler.Next(), nil)
			c.shard.Record(metrics.Hold, time.Since(entered))
		}
		g.note(round, 1, 1)
		leaveStart := time.Now()
		err := r.release(s, b.Leave, nil)
		left := time.Now()
		// Every client of the group has counted the arrivals (each counts
		// before it leaves, and Leave returns once all have left).
		arrival.remove(&r.chk, 2*r.run.SessionTimeout)
		if err != nil {
			c.hist.Add(oracle.Depart, part, leaveStart, left, oracle.Unknown, int64(round))
			r.opFailed(err)
			return
		}
		c.hist.Add(oracle.Depart, part, leaveStart, left, oracle.OK, int64(round))
		c.hist.Add(oracle.Left, part, left, left, oracle.OK, int64(round))
		if n := g.count(round, 1); n < g.local {
			r.chk.note("barrier", &r.chk.mutex, "%s round %d: left with %d of %d leaving", g.dir, round, n, g.local)
		}
		if counted {
			if leader {
				r.opDone(func() { c.shard.Record(BarrierLeave, time.Since(leaveStart)) })
			} else {
				c.shard.Record(BarrierLeave, time.Since(leaveStart))
			}
		}
		g.forget(round)
	}
}

// arrivalDir is where a group's clients record their arrivals in a run
// spread over processes: a sibling of the group's directory.
func arrivalDir(group string) string { return group + "-arrivals" }

// arrival is one client's arrival record at a round of a barrier spread
// over processes; the zero arrival (a run of one process) does nothing.
type arrival struct {
	s     *recipes.Session
	conn  *zk.Conn
	dir   string
	round string // the records' prefix for this round
	node  string
	err   error
}

// arrive records client idx's arrival at round before it enters: an
// ephemeral node, removed once the round is over (or the session ends).
func (w *barrierWork) arrive(s *recipes.Session, g *barrierGroup, round, idx int) arrival {
	if w.procs < 2 {
		return arrival{}
	}
	a := arrival{s: s, conn: s.Conn(), dir: arrivalDir(g.dir), round: fmt.Sprintf("r%d-", round)}
	a.node = fmt.Sprintf("%s/%sp%d-%d", a.dir, a.round, w.proc, idx)
	if _, err := a.conn.Create(a.node, nil, zk.FlagEphemeral, openACL); err != nil {
		a.err = fmt.Errorf("create %s: %w", a.node, err)
	}
	return a
}

// check counts the round's arrivals once this client entered: the
// barrier opened for the group only if all size had arrived, whichever
// process they are in. A record that could not be written or read leaves
// the round unchecked, counted in a warning.
func (a arrival) check(c *checker, size int) {
	if a.conn == nil {
		return
	}
	if a.err != nil {
		c.unchecked("barrier arrivals", a.err)
		return
	}
	children, _, err := a.conn.Children(a.dir)
	if err != nil {
		c.unchecked("barrier arrivals", fmt.Errorf("list %s: %w", a.dir, err))
		return
	}
	n := 0
	for _, ch := range children {
		if strings.HasPrefix(ch, a.round) {
			n++
		}
	}
	if n < size {
		c.note("barrier", &c.mutex, "%s round %s entered with %d of %d arrived across processes", a.dir, strings.TrimSuffix(strings.TrimPrefix(a.round, "r"), "-"), n, size)
	}
}

func (a arrival) remove(c *checker, patience time.Duration) {
	if a.conn == nil || a.err != nil {
		return
	}
	if err := removeRecord(a.s, a.node, patience); err != nil {
		c.unchecked("barrier arrivals", fmt.Errorf("remove %s: %w", a.node, err))
	}
}
