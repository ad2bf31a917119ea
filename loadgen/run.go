package loadgen

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/pkgerr"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// Run runs one scenario run (a scenario, or one step of a compare
// scenario) and returns what it measured and checked.
//
// When ctx ends, the run stops gracefully: no new operation starts, waiters
// give up (deleting their nodes), holders release, sessions close and the
// namespace is removed; the Result is then marked Partial and err is nil.
// An error means the run could not take place or lost its servers: bad
// options, servers that refuse sessions, a server gone mid-run.
func Run(ctx context.Context, run scenarios.Run, opts Options) (*Result, error) {
	r, err := newRunner(run, opts)
	if err != nil {
		return nil, pkgerr.Wrap("loadgen", err)
	}
	defer func() { r.stopGoverning() }() // set during the run, once its sessions are open
	res, err := r.execute(ctx)
	return res, pkgerr.Wrap("loadgen", err)
}

// runner is the state of one run. Its goroutines: the caller's (execute),
// the ticker, the ramp-up's openers, one loop per client, and the open-loop
// dispatcher; each is started and waited for by execute.
type runner struct {
	run    scenarios.Run
	opts   Options
	ns     string
	params sessionParams
	logf   func(string, ...any)

	rec     *metrics.Recorder
	hist    *oracle.Recorder // every operation, for the linearizability check
	wire    wireStats
	chk     checker
	occ     *occupancy // holders across processes, nil outside a shared namespace
	work    workload
	clients []*client

	start time.Time
	// windowStart is nil until operations may start. A time.Time, not
	// its UnixNano: open-loop arrivals are due at windowStart plus their
	// offset, and a latency from that intended start must be measured on
	// the monotonic clock. Wall-clock only, a small step back of the
	// system clock (NTP, a VM's time sync) made some negative ("1
	// negative (recorded as 0)" in a --rate run).
	windowStart atomic.Pointer[time.Time]
	windowOpen  chan struct{}
	// loopsGo lets the clients' loops start their first operation: at the
	// start for closed loops (each as its session opens), when the window
	// opens for the others.
	loopsGo chan struct{}
	// rampResult is what the ramp-up did, once the window is open. The
	// counts then, which the window's are taken from, are the window's
	// before snapshot's (snapshot.counts), published with it.
	rampResult *Ramp
	drainTook  time.Duration // from the window's end to every loop's
	stopCh     chan struct{}
	stopOnce   sync.Once
	stopAt     time.Time // written once, before stopCh closes
	opCtx      context.Context
	opCancel   context.CancelFunc
	fail       context.CancelCauseFunc // ends the run with an error
	parent     context.Context         // the caller's: done means stop at once (partial)

	tickets chan time.Time // open-loop arrivals: intended start times
	// blocked is how long the dispatcher waited for a free client (every
	// client busy): the server, or too few clients, could not keep up.
	blocked atomic.Int64

	started atomic.Uint64 // operations started (the ops budget)
	ops     atomic.Int64  // operations completed in the window
	// splitMu makes the ramp-up's split of ops and histograms one instant
	// for opDone (its writer is the split, its readers every operation).
	splitMu sync.RWMutex
	rampOps atomic.Int64 // operations completed in the ramp-up (Progress.RampOps)
	// counts holds the counts figures need that are counted as they
	// happen (releases, ...); the others are read at the window's ends
	// (totalsBetween).
	counts figures.Counter
	alive  atomic.Int64 // sessions open

	admin    *recipes.Session
	adminLog lastLine

	// stopGoverning ends the run's memory limit (memlimit.go), set once
	// every session is open.
	stopGoverning func()

	fx *faultRun // faults and fencing (faults.go); nil when neither applies

	// The generator's own load (selfload.go): the window's start is
	// written by execute before the ticker reads it, the intervals by the
	// ticker, the result by execute once the ticker has stopped.
	self selfWatch

	// unreachable is how long the window went without a connection to
	// the servers (countUnreachable), in nanoseconds.
	unreachable atomic.Int64
	throughput  []float64 // ops per second per interval; the ticker's
	// busiest is the lock's wait graph at the window's busiest tick; the
	// ticker's, read by account once it has stopped.
	busiest *WaitGraph

	// The counters at the window's start, and the servers' at the latest
	// poll, for the live figures.
	before    atomic.Pointer[snapshot]
	serverNow atomic.Pointer[serverCounters]
	// digestsSeen is the most zk_digest_mismatches_count each member
	// showed the poller; written by pollServers only, read after it ended.
	digestsSeen []int64
}

// lastLine keeps the last line a session logged, for error messages.
type lastLine struct {
	mu   sync.Mutex
	line string
}

func (l *lastLine) Printf(format string, args ...any) {
	l.mu.Lock()
	l.line = fmt.Sprintf(format, args...)
	l.mu.Unlock()
}

func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.line
}

func newRunner(run scenarios.Run, opts Options) (*runner, error) {
	switch {
	case len(opts.Servers) == 0:
		return nil, fmt.Errorf("%w: no ZooKeeper server given", ErrBadOptions)
	case run.Clients <= 0:
		return nil, fmt.Errorf("%w: clients must be at least 1, got %d", ErrBadOptions, run.Clients)
	case run.Duration <= 0 && run.Ops == 0:
		return nil, fmt.Errorf("%w: a run needs a duration or an operation count", ErrBadOptions)
	case run.SessionTimeout <= 0:
		return nil, fmt.Errorf("%w: session timeout must be above 0", ErrBadOptions)
	case !run.Recipe.Valid():
		return nil, fmt.Errorf("%w: unknown recipe %q", ErrBadOptions, run.Recipe)
	}
	opts.RunID = cmp.Or(opts.RunID, NewRunID())
	if !validRunID(opts.RunID) {
		return nil, fmt.Errorf("%w: run id %q: use letters, digits, '-', '_' and '.'", ErrBadOptions, opts.RunID)
	}
	opts.Interval = cmp.Or(opts.Interval, DefaultInterval)
	if len(opts.Members) == 0 {
		opts.Members = opts.Servers
	}
	if opts.TLS != nil {
		opts.SessionOptions = append(slices.Clone(opts.SessionOptions), recipes.WithTLS(opts.TLS))
	}
	r := &runner{
		stopGoverning: func() {},
		run:           run,
		opts:          opts,
		logf:          opts.Logf,
		windowOpen:    make(chan struct{}),
		loopsGo:       make(chan struct{}),
		stopCh:        make(chan struct{}),
	}
	if r.logf == nil {
		r.logf = func(string, ...any) {}
	}
	r.ns = r.namespace()
	r.hist = oracle.NewRecorder(time.Now(), 0)
	if err := r.checkShared(); err != nil {
		return nil, err
	}
	work, err := newWorkload(r)
	if err != nil {
		return nil, err
	}
	r.work = work
	r.occ = r.newOccupancy()
	if err := r.prepareFaults(); err != nil {
		return nil, err
	}
	r.params = sessionParams{
		servers:        opts.Servers,
		tls:            opts.TLS,
		opts:           opts.SessionOptions,
		timeout:        run.SessionTimeout,
		sendBuf:        sendBufferSize,
		recvBuf:        work.recvBuffer(),
		sourceAddrs:    sourceAddrCount(opts.SourceAddrs, run.Clients, opts.Servers),
		connectTimeout: max(2*run.SessionTimeout, 15*time.Second),
		name:           opts.Name,
	}
	return r, nil
}

// sendBufferSize is a client session's send buffer: every request a
// recipe sends (paths, small node data) fits with room to spare, and so
// does the re-arming of a session's watches after a reconnection (one
// setWatches packet with every watched path: about 30 paths of 100
// bytes). It is the largest buffer an idle session holds (issue 13), but
// it stays: go-zookeeper only logs a setWatches that does not fit, and
// the session's watches are then lost without an error.
const sendBufferSize = 4 << 10

// childListBuffer is the receive buffer a session needs to list a
// directory of n recipe nodes: each name is up to about 60 bytes plus a
// 4-byte length, with room for the reply header and stat.
func childListBuffer(n int) int { return n*80 + 8<<10 }

// smallRecvBuffer is the receive buffer of a client session that reads no
// listing (or lists through the run's Lister): its largest replies are a
// created node's path, a node's stat with the lock's data (none in a load
// run; a foreign client's "__REVOKE__"), a multi's results and watch
// events, each well under 1 KiB. Assumption: recipe paths stay under
// about 300 bytes (a 100-byte path makes a 130-byte watch event), so 2 KiB
// leaves twice the room of the largest; a larger reply drops the
// connection and fails the request with recipes.ErrReplyTooLarge (an
// error of the run), never quietly.
// Every idle session holds this buffer: at 10,000 sessions, each KiB is
// 10 MiB of live heap and about twice that of RSS (issue 13).
const smallRecvBuffer = 2 << 10

// listerUser is a workload whose clients list large directories through
// one shared session (recipes.Lister) instead of their own.
type listerUser interface {
	// listerBuffer is the Lister session's receive buffer; 0 when the
	// clients list over their own sessions.
	listerBuffer() int
}

// listerBuffer is the receive buffer of the run's Lister session, 0 for
// none.
func (r *runner) listerBuffer() int {
	lu, ok := r.work.(listerUser)
	if !ok {
		return 0
	}
	n := lu.listerBuffer()
	if n > 0 && r.opts.SharedNamespace && r.opts.NamespaceClients > r.run.Clients {
		// Every process's nodes are in the listings (fitSharedListings).
		n = n * ((r.opts.NamespaceClients + r.run.Clients - 1) / r.run.Clients)
	}
	return n
}

// openLister opens the run's Lister session, if the workload wants one.
// It goes to the servers directly, not through the fault proxies: the
// faults are aimed at the clients' sessions, and a Lister session that
// expired would fail every listing for the rest of the run. It is opened
// before startNetwork points the clients at the proxies.
func (r *runner) openLister(ctx context.Context) (*recipes.Session, error) {
	buf := r.listerBuffer()
	if buf == 0 {
		return nil, nil
	}
	// Its requests are the clients' (their listings): tapped like theirs.
	lc := &client{tap: &tap{stats: &r.wire}}
	opts := append(slices.Clone(r.opts.SessionOptions),
		recipes.WithSessionTimeout(r.run.SessionTimeout),
		recipes.WithBufferSizes(sendBufferSize, max(buf, recipes.DefaultBufferSize)))
	opts = append(opts, r.params.dialOptions(lc, nil)...)
	lctx, cancel := context.WithTimeout(ctx, max(r.run.SessionTimeout, 5*time.Second))
	defer cancel()
	s, err := recipes.NewSession(lctx, r.opts.Servers, opts...)
	if err != nil {
		return nil, fmt.Errorf("listing session: %w", err)
	}
	r.params.lister = recipes.NewLister(s)
	return s, nil
}

// execute runs the run in its stages: prepare (admin session, namespace,
// network, clients), ramp (sessions opened, loops started, window opened),
// window (until the duration, the operations or the caller's end), drain
// (loops finished) and account (the Result, assembled in one place); see
// Run.
func (r *runner) execute(ctx context.Context) (*Result, error) {
	r.parent = ctx
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	r.fail = fail
	r.opCtx, r.opCancel = context.WithCancel(context.WithoutCancel(ctx))
	defer r.opCancel()

	env, err := r.prepare(ctx, runCtx)
	if err != nil {
		return nil, err
	}
	res, err := r.measure(ctx, runCtx)
	if err = env.close(ctx, err); err != nil && res == nil {
		return nil, err
	}
	return res, err
}

// measure runs the stages between prepare and the namespace's removal:
// the ticker and server poller go for as long as the clients do.
func (r *runner) measure(ctx, runCtx context.Context) (*Result, error) {
	bg := r.background(runCtx)
	defer bg.stop()
	ramped := r.ramp(runCtx)
	end := r.window(ctx, runCtx, ramped)
	r.drain(ramped.loops)
	bg.stop()
	res := r.account(ctx, ramped.before, end)
	if end.err != nil {
		return nil, end.err
	}
	return res, nil
}

// env is what prepare set up and close tears down (the admin session is
// r.admin: a new one replaces it after the window if it expired).
type env struct {
	r       *runner
	lister  *recipes.Session // nil without one
	network bool             // startNetwork succeeded
}

// prepare opens the admin session (it sets up and tears down the
// namespace and watches the servers for the run), makes the namespace,
// prepares the workload, opens the lister session and the fault network,
// and makes the recorder and the clients. On error it has undone what it
// did.
func (r *runner) prepare(ctx, runCtx context.Context) (e *env, err error) {
	admin, err := r.openAdmin(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	r.admin = admin
	r.params.serverUp = func() bool { return admin.State() == recipes.StateConnected }
	r.params.maxCnxns = func(ctx context.Context) (string, error) { return maxClientCnxns(ctx, r.opts.Servers, r.opts.TLS) }

	info, _ := json.Marshal(map[string]any{
		"scenario": r.run.Name, "recipe": r.run.Recipe, "clients": r.run.Clients,
		"started": time.Now().UTC().Format(time.RFC3339), "pid": os.Getpid(), "host": hostname(),
	})
	if !r.opts.SharedNamespace {
		r.removeDeadRuns(ctx, admin.Conn())
	}
	if err := r.makeNamespace(admin.Conn(), info); err != nil {
		admin.Close()
		return nil, err
	}
	e = &env{r: r}
	defer func() {
		if err != nil {
			err = e.close(ctx, err)
			e = nil
		}
	}()
	if err := r.work.prepare(runCtx, admin.Conn()); err != nil {
		return e, err
	}
	if e.lister, err = r.openLister(runCtx); err != nil {
		return e, err
	}
	if err := r.startNetwork(runCtx); err != nil {
		return e, err
	}
	e.network = true

	r.start = time.Now()
	recOpts := []metrics.Option{metrics.WithPhases(r.work.extraPhases()...)}
	if r.opts.OnInterval != nil {
		recOpts = append(recOpts, metrics.WithIntervalHook(r.opts.OnInterval))
	}
	if r.rec, err = metrics.NewRecorder(r.start, recOpts...); err != nil {
		return e, err
	}
	shards := make([]*metrics.Shard, min(r.run.Clients, 32))
	for i := range shards {
		shards[i] = r.rec.NewShard()
	}
	r.clients = make([]*client, r.run.Clients)
	for i := range r.clients {
		sh := shards[i%len(shards)]
		r.clients[i] = &client{idx: i, slot: r.work.slotOf(i), shard: sh, tap: &tap{stats: &r.wire, shard: sh}, hist: r.hist.Buffer(i)}
	}
	r.givePausers()
	if n := r.params.sourceAddrs; n > 1 {
		r.logf("spreading %d client connections over %d loopback source addresses (127.0.0.1-127.0.0.%d)", r.run.Clients, n, n)
	}
	return e, nil
}

// removeDeadRuns removes the namespaces that runs whose owners are gone
// left on the servers (RemoveDeadRuns) and says so; a failure to is said
// too, and does not stop the run.
func (r *runner) removeDeadRuns(ctx context.Context, conn *zk.Conn) {
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	removed, err := RemoveDeadRuns(rctx, conn, r.opts.Chroot)
	if len(removed) > 0 {
		r.logf("removed %s left by runs whose owners are gone: %s", plural(len(removed), "namespace"), strings.Join(removed, ", "))
	}
	if err != nil && ctx.Err() == nil {
		r.logf("could not remove every namespace left by runs whose owners are gone: %v", err)
	}
}

// plural is "1 namespace", "3 namespaces".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// close tears down what prepare set up, in reverse: the fault network,
// the lister session, the namespace, the admin session. runErr is why the
// run stopped, if it did; close returns it, or else the namespace's
// removal's error.
func (e *env) close(ctx context.Context, runErr error) error {
	r := e.r
	if e.network {
		r.closeNetwork()
	}
	if e.lister != nil {
		e.lister.Close()
	}
	defer func() { r.admin.Close() }() // the one open then (reviveAdmin)
	if r.opts.SharedNamespace {
		return runErr
	}
	// Wait long enough for a starved or faulty ensemble, short when the
	// run already found the servers gone (the user should not wait
	// minutes to hear it).
	limit := 2 * time.Minute
	if errors.Is(runErr, ErrServerLost) {
		limit = 10 * time.Second
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	if r.admin.State() != recipes.StateConnected {
		// A request on a session with no connection waits for one:
		// removal would hang until the limit or beyond.
		if err := r.awaitServers(cctx); err != nil {
			return cmp.Or(runErr, fmt.Errorf("%w: the run's namespace %s stays on the servers (%v); the next zkherd load on them removes it", ErrServerLost, r.ns, err))
		}
	}
	conn := r.admin.Conn()
	err := removeTree(cctx, conn, r.ns)
	if err != nil && cctx.Err() == nil {
		// The admin session ended or cannot reach a server (expired or
		// cut off on a starved or faulty ensemble): a fresh one removes
		// the namespace.
		if fresh, ferr := recipes.NewSession(cctx, r.opts.Servers, r.adminOptions()...); ferr == nil {
			defer fresh.Close()
			conn = fresh.Conn()
			err = removeTree(cctx, conn, r.ns)
		}
	}
	if runErr != nil {
		return runErr
	}
	if err != nil {
		return fmt.Errorf("could not remove the run's namespace %s: %w", r.ns, err)
	}
	removeEmptyParents(conn, r.ns, r.opts.Chroot)
	return nil
}

// background is the ticker and the server poller; stop ends both and
// waits for them (idempotent).
type background struct {
	stop func()
}

func (r *runner) background(ctx context.Context) background {
	stop := make(chan struct{})
	tickDone, pollDone := make(chan struct{}), make(chan struct{})
	go r.ticker(ctx, stop, tickDone)
	go r.pollServers(ctx, stop, pollDone)
	return background{stop: sync.OnceFunc(func() { close(stop); <-tickDone; <-pollDone })}
}

// loops are the clients' loops and the open-loop dispatcher: done closes
// once every one has returned (after seal).
type loops struct {
	wg   sync.WaitGroup
	done chan struct{}
}

func (l *loops) start(f func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f()
	}()
}

// seal closes done once the loops started so far have returned; no loop
// starts after it.
func (l *loops) seal() {
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		l.wg.Wait()
	}()
}

// splitRamp ends the ramp-up's figures at once: its operations and its
// histograms, under splitMu so that no operation is counted on one side
// and recorded on the other (opDone); it returns the instant.
func (r *runner) splitRamp() time.Time {
	r.splitMu.Lock()
	defer r.splitMu.Unlock()
	now := time.Now()
	rampOps := r.ops.Swap(0)
	r.rampOps.Store(rampOps)
	r.rampResult = &Ramp{Duration: now.Sub(r.start), Sessions: int(r.alive.Load()),
		Ops: rampOps, Metrics: r.rec.Split(now)}
	return now
}

// ramped is what the ramp-up leaves: the loops, the counters at the
// window's start, and why the run cannot go on (sessions refused, faults
// that could not start, the caller's end).
type ramped struct {
	loops  *loops
	before snapshot
	err    error
}

// ramp opens the clients' sessions on the scenario's schedule and starts
// their loops: a closed loop's as each session opens (its window opens
// at the start), others' once every session is open, when the window
// opens; then the faults start.
func (r *runner) ramp(runCtx context.Context) ramped {
	out := ramped{loops: &loops{}, before: r.snapshot(runCtx)}
	r.noteBefore(out.before)
	work := func(c *client) func() { return func() { r.work.loop(c) } }
	closed := r.run.Arrival.Kind == scenarios.Closed
	// A closed loop starts as each session opens (the clients queue up as
	// they arrive, no stampede), but the window opens once every session
	// is open: what the ramp-up did is its own figure (Result.Ramp), not
	// the window's. A run bounded by operations counts them from the
	// start, ramp-up included.
	splitRamp := closed && r.run.Ops == 0
	if closed {
		close(r.loopsGo)
		if !splitRamp {
			r.openWindow(r.start)
		}
	}
	ramp := scenarios.RampFor(r.run)
	if d := ramp.Done(); d >= 2*time.Second {
		r.logf("ramping up %d sessions at %.0f/s: about %v before the window opens", r.run.Clients, ramp.Rate, d.Round(time.Second))
	}
	out.err = r.params.rampUp(runCtx, r.clients, r.start, ramp.At, func(c *client) {
		r.alive.Add(1)
		r.rec.AddSessions(1)
		r.counts.Add(figures.SessionsOpened, 1)
		if closed {
			out.loops.start(work(c))
		}
	})
	if out.err == nil {
		// Once every session is open: opening them is go-zookeeper's 1.5
		// MiB of garbage per session, and a limit then makes the runtime
		// return freed pages that the next opening faults in again
		// (memlimit.go).
		r.stopGoverning = governMemory(r.run.Clients)
	}
	if out.err == nil && splitRamp {
		now := r.splitRamp()
		counts := r.counts.Totals()
		out.before = r.snapshot(runCtx)
		out.before.counts = counts
		r.noteBefore(out.before)
		r.openWindow(now)
	}
	if out.err == nil && !closed {
		now := time.Now()
		r.rampResult = &Ramp{Duration: now.Sub(r.start), Sessions: int(r.alive.Load())}
		open := r.run.Arrival.Kind.Open()
		if open {
			r.tickets = make(chan time.Time, r.run.Clients)
		}
		for _, c := range r.clients {
			out.loops.start(work(c))
		}
		counts := r.counts.Totals() // the ramp-up's sessions are not the window's
		out.before = r.snapshot(runCtx)
		out.before.counts = counts
		r.noteBefore(out.before)
		r.openWindow(time.Now())
		close(r.loopsGo)
		if open {
			out.loops.start(func() {
				defer close(r.tickets) // its only sender is done
				r.dispatch()
			})
		}
	}
	if err := r.startFaults(); err != nil && out.err == nil {
		out.err = err
	}
	out.loops.seal()
	return out
}

// windowEnd is how the window ended.
type windowEnd struct {
	// partial: the caller ended the run early; err: the run failed.
	partial bool
	err     error
	// self is the generator's own load and after the counters, both read
	// when the window closed.
	self  selfLoad
	after snapshot
}

// window waits for the window's end (its duration, every loop done, or
// the run's context), undoes the faults and stops the clients' operations.
func (r *runner) window(ctx, runCtx context.Context, ramped ramped) windowEnd {
	var end windowEnd
	if ramped.err != nil {
		r.stop()
		if ctx.Err() != nil {
			end.partial = true
		} else {
			end.err = ramped.err
		}
	} else {
		var timeout <-chan time.Time
		if d := r.run.Duration; d > 0 {
			t := time.NewTimer(time.Until(r.windowStartTime().Add(d)))
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-timeout:
		case <-ramped.loops.done:
		case <-runCtx.Done():
			if ctx.Err() != nil {
				end.partial = true
			} else {
				end.err = context.Cause(runCtx)
			}
		}
		// Undo the faults (restart killed members...) before the clients
		// stop, so that they stop on a healthy ensemble.
		r.stopFaults()
		r.stop()
	}
	end.self = readSelfLoad()
	end.after = r.snapshot(context.WithoutCancel(ctx))
	return end
}

// drain lets holders release and waiters give up; closing the sessions
// ends any loop that is still stuck (a server gone).
func (r *runner) drain(l *loops) {
	// A client still holding or waiting past a session timeout has lost
	// its servers (or its session): waiting longer only delays the report.
	grace := r.patience()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-l.done:
	case <-t.C:
		r.logf("some clients did not stop within %v; closing their sessions", grace)
		r.closeSessions()
		<-l.done
	}
	if !r.stopAt.IsZero() {
		r.drainTook = time.Since(r.stopAt)
	}
}

// closeSessions closes every client session, many at once (each close
// waits for the server's answer).
func (r *runner) closeSessions() {
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	for _, c := range r.clients {
		s := c.sess.Swap(nil)
		if s == nil {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s.Close()
		}()
		r.alive.Add(-1)
		r.rec.AddSessions(-1)
	}
	wg.Wait()
}

func (r *runner) openWindow(at time.Time) {
	r.self.window = readSelfLoad()
	r.windowStart.Store(&at)
	close(r.windowOpen)
}

// windowElapsed is the time since the window opened, up to its stop.
func (r *runner) windowElapsed() time.Duration {
	ws := r.windowStartTime()
	switch {
	case ws.IsZero():
		return 0
	case r.stopping():
		return r.stopAt.Sub(ws)
	}
	return time.Since(ws)
}

func (r *runner) windowStartTime() time.Time {
	if at := r.windowStart.Load(); at != nil {
		return *at
	}
	return time.Time{}
}

// stop ends the window: no operation starts after it, waiters give up,
// holders cut their hold short and release. Idempotent.
func (r *runner) stop() {
	r.stopOnce.Do(func() {
		r.stopAt = time.Now()
		close(r.stopCh)
		r.opCancel()
	})
}

func (r *runner) stopping() bool {
	select {
	case <-r.stopCh:
		return true
	default:
		return false
	}
}
