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
	// rampResult is what the ramp-up did, once the window is open;
	// rampCounts the counts then, which the window's are taken from.
	rampResult *Ramp
	rampCounts figures.Totals
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
	rampOps atomic.Int64  // operations completed in the ramp-up (Progress.RampOps)
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
	res, err := r.measure(ctx, runCtx, env.admin)
	if err = env.close(ctx, err); err != nil && res == nil {
		return nil, err
	}
	return res, err
}

// measure runs the stages between prepare and the namespace's removal:
// the ticker and server poller go for as long as the clients do.
func (r *runner) measure(ctx, runCtx context.Context, admin *recipes.Session) (*Result, error) {
	bg := r.background(runCtx)
	defer bg.stop()
	ramped := r.ramp(runCtx)
	end := r.window(ctx, runCtx, ramped)
	r.drain(ramped.loops)
	bg.stop()
	res := r.account(ctx, admin.Conn(), ramped.before, end)
	if end.err != nil {
		return nil, end.err
	}
	return res, nil
}

// env is what prepare set up and close tears down.
type env struct {
	r       *runner
	admin   *recipes.Session
	lister  *recipes.Session // nil without one
	network bool             // startNetwork succeeded
}

// prepare opens the admin session (it sets up and tears down the
// namespace and watches the servers for the run), makes the namespace,
// prepares the workload, opens the lister session and the fault network,
// and makes the recorder and the clients. On error it has undone what it
// did.
func (r *runner) prepare(ctx, runCtx context.Context) (e *env, err error) {
	adminOpts := append(slices.Clone(r.opts.SessionOptions),
		recipes.WithSessionTimeout(r.run.SessionTimeout), recipes.WithLogger(&r.adminLog))
	actx, cancel := context.WithTimeout(ctx, max(r.run.SessionTimeout, 5*time.Second))
	admin, err := recipes.NewSession(actx, r.opts.Servers, adminOpts...)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	r.admin = admin
	r.params.serverUp = func() bool { return admin.State() == recipes.StateConnected }

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
	e = &env{r: r, admin: admin}
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
	defer e.admin.Close()
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
	conn := e.admin.Conn()
	err := removeTree(cctx, conn, r.ns)
	if err != nil && cctx.Err() == nil {
		// The admin session ended or cannot reach a server (expired or
		// cut off on a starved or faulty ensemble): a fresh one removes
		// the namespace.
		if fresh, ferr := recipes.NewSession(cctx, r.opts.Servers, r.opts.SessionOptions...); ferr == nil {
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
		now := time.Now()
		rampOps := r.ops.Swap(0)
		r.rampOps.Store(rampOps)
		r.rampResult = &Ramp{Duration: now.Sub(r.start), Sessions: int(r.alive.Load()),
			Ops: rampOps, Metrics: r.rec.Split(now)}
		r.rampCounts = r.counts.Totals()
		out.before = r.snapshot(runCtx)
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
		out.before = r.snapshot(runCtx)
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

// snapshot is what the herd measures compare between the window's ends.
type snapshot struct {
	at        time.Time
	wakeups   int64
	requests  int64
	byKind    map[string]int64
	server    serverCounters
	serverErr error
}

func (r *runner) noteBefore(s snapshot) { r.before.Store(&s) }

// pollServers reads the servers' counters once per interval until stop,
// for the live packets-per-operation figure.
func (r *runner) pollServers(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, r.opts.Interval)
			c, err := readCounters(pctx, r.opts.Members, r.opts.TLS)
			cancel()
			if err == nil {
				r.serverNow.Store(&c)
			}
		}
	}
}

func (r *runner) snapshot(ctx context.Context) snapshot {
	s := snapshot{at: time.Now(), requests: r.wire.total.Load(), byKind: r.wire.byKind()}
	for _, c := range r.clients {
		s.wakeups += c.wakeups()
	}
	s.server, s.serverErr = readCounters(ctx, r.opts.Members, r.opts.TLS)
	return s
}

// account assembles the Result, once, from what each stage returns: the
// window's figures, then the post-run checks (the workload's, leftovers,
// faults and fencing, the checker's, the open model's rate), then the
// metrics. Every client session is closed on return, and the final
// progress sent.
func (r *runner) account(ctx context.Context, conn *zk.Conn, before snapshot, end windowEnd) *Result {
	windowStart, ops := r.windowStartTime(), r.ops.Load()
	var throughput float64
	if w := r.stopAt.Sub(windowStart).Seconds(); w > 0 && !windowStart.IsZero() {
		throughput = float64(ops) / w
	}
	var gen Generator
	if !windowStart.IsZero() {
		gen = r.self.result(end.self)
	}
	var genNotes []string
	if gen.Behind {
		genNotes = []string{gen.note()}
	}
	target, achieved, rateWarning := r.openRates(end.partial, r.stopAt.Sub(windowStart), throughput)

	var (
		work workResult
		left leftoverCheck
	)
	if end.err == nil || errors.Is(end.err, ErrServerLost) {
		fin := context.WithoutCancel(ctx)
		if err := r.awaitServers(fin); err != nil {
			// A request on a session with no connection waits for one
			// (go-zookeeper has no per-request timeout): ask nothing.
			left = notLookedAt(err)
			if r.run.Recipe == scenarios.Queue {
				work.notChecked = []string{"lost items: " + err.Error()}
			}
		} else {
			work = r.work.finish(fin, conn)
			if r.opts.SharedNamespace {
				left = r.checkOwnLeftovers(fin, conn)
			} else {
				left = r.checkLeftovers(fin, conn)
			}
		}
	}
	r.closeSessions()
	fault := r.faultResult()
	// The checker last: the workload's and the fencing check's violations
	// are noted with it.
	checks := r.checkerResult(work, left, fault.foreign, rateWarning, time.Duration(r.unreachable.Load()))
	history, lin := r.checkHistory(ctx)
	checks = withLinearizability(checks, lin)
	events := append(r.chk.violationEvents(), fault.events...)
	if e, ok := r.grantedEvent(windowStart); ok {
		events = append(events, e)
	}
	finished := r.rec.Finish(time.Now())

	res := &Result{
		Run:             r.run,
		RunID:           r.opts.RunID,
		Namespace:       r.ns,
		Partial:         end.partial,
		Unreachable:     time.Duration(r.unreachable.Load()),
		Ramp:            r.rampResult,
		Drain:           r.drainTook,
		Start:           r.start,
		WindowStart:     windowStart,
		Stop:            r.stopAt,
		Ops:             ops,
		Releases:        r.counts.Get(figures.Releases) - r.rampCounts[figures.Releases],
		Throughput:      throughput,
		TargetRate:      target,
		AchievedRate:    achieved,
		Metrics:         finished,
		Requests:        requestsBetween(before, end.after),
		Totals:          r.totalsBetween(before, end.after, ops),
		MntrError:       mntrError(before, end.after),
		Checks:          checks,
		SourceAddrs:     r.params.sourceAddrs,
		QueueDepth:      work.queueDepth,
		Notes:           slices.Concat(genNotes, work.notes, fault.notes),
		Events:          events,
		Faults:          fault.summary,
		Fencing:         fault.fencing,
		Generator:       gen,
		Lock:            r.busiest,
		History:         history,
		Linearizability: lin,
	}
	r.progress("done", res.Metrics.Intervals, nil)
	return res
}

// requestsBetween counts the clients' requests by kind between two
// snapshots.
func requestsBetween(before, after snapshot) map[string]int64 {
	out := make(map[string]int64)
	for k, n := range after.byKind {
		if d := n - before.byKind[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// totalsBetween is the window's raw counts between two snapshots, for
// ops operations: the counted ones, the clients' wake-ups and requests,
// and the servers' counters when both ends could read them.
func (r *runner) totalsBetween(before, after snapshot, ops int64) figures.Totals {
	t := r.counts.Totals()
	for k, n := range r.rampCounts {
		t[k] -= n
	}
	t[figures.Operations] = ops
	t[figures.Wakeups] = after.wakeups - before.wakeups
	t[figures.ZKRequests] = after.requests - before.requests
	if !r.start.IsZero() {
		t[figures.ElapsedMs] = after.at.Sub(r.start).Milliseconds()
	}
	if before.serverErr == nil && after.serverErr == nil {
		d := after.server.sub(before.server)
		t[figures.ServerPackets], t[figures.WatchFanout] = d.packets, d.fanout
	}
	return t
}

// mntrError says, on one line, why the servers' counters are missing
// from either end of the window; "" when both were read.
func mntrError(before, after snapshot) string {
	if err := errors.Join(before.serverErr, after.serverErr); err != nil {
		return oneLine(err)
	}
	return ""
}

// checkerResult is the run's checks: the checker's counts and
// violations, then the workload's, the leftover check's and the foreign
// client's figures, and the warnings.
func (r *runner) checkerResult(work workResult, left leftoverCheck, foreign foreignResult, rateWarning string, unreachable time.Duration) Checks {
	violations := append(r.chk.violations(), left.violations()...)
	notChecked := slices.Clone(work.notChecked)
	if left.notChecked != "" {
		notChecked = append(notChecked, left.notChecked)
	}
	if unreachable > 0 {
		notChecked = append(notChecked, fmt.Sprintf("the window while the servers were unreachable: %v of %v (%s); its figures and checks cover only the rest",
			unreachable.Round(100*time.Millisecond), r.stopAt.Sub(r.windowStartTime()).Round(100*time.Millisecond), joinServers(r.opts.Servers)))
	}
	warnings := work.warnings
	if rateWarning != "" {
		warnings = append(warnings, rateWarning)
	}
	return Checks{
		MutualExclusionViolations: r.chk.mutex.Load(),
		FencingViolations:         r.chk.fencing.Load(),
		FIFOBypasses:              r.chk.fifo.Load(),
		MaxBypass:                 r.chk.maxBypass.Load(),
		FIFOChecked:               r.run.Recipe == scenarios.FairLock,
		SemaphoreOverIssued:       r.chk.overIssued.Load(),
		DoubleLeaders:             r.chk.doubleLeader.Load(),
		LostItems:                 work.lostItems,
		DuplicateItems:            work.duplicateItems,
		Unconsumed:                work.unconsumed,
		ForeignDeletedItems:       foreign.deletedItems,
		ForeignGrants:             r.chk.foreignGrant.Load(),
		ForeignRacedGrants:        foreign.racedGrants,
		ForeignExcusedOverlaps:    foreign.excusedOverlaps,
		ForeignDeletedHolders:     foreign.deletedHolders,
		LostGrants:                r.chk.lostGrants.Load(),
		LostGrantsReported:        r.chk.lostReported.Load(),
		LeftoverZnodes:            left.n,
		LeftoverPaths:             left.paths,
		Violations:                violations,
		NotChecked:                notChecked,
		Passed:                    len(violations) == 0 && len(notChecked) == 0,
		Warnings:                  warnings,
	}
}

// leftoverCheck is what the leftover check found: the recipe nodes still
// in the namespace once every client had finished, or why it could not
// look (notChecked, n -1).
type leftoverCheck struct {
	n          int64
	paths      []string
	violation  string
	notChecked string
}

// notLookedAt is the leftover check that could not look: not 0 found.
func notLookedAt(err error) leftoverCheck {
	return leftoverCheck{n: -1, notChecked: fmt.Sprintf("leftover znodes: could not look at the namespace: %v", err)}
}

// checkLeftovers counts recipe nodes still in the namespace now that every
// client has finished (their sessions are still open, so a forgotten
// ephemeral node is still there to be seen).
func (r *runner) checkLeftovers(ctx context.Context, conn *zk.Conn) leftoverCheck {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, some, err := leftovers(ctx, conn, r.ns)
	if err != nil {
		return notLookedAt(err)
	}
	out := leftoverCheck{n: n, paths: some}
	if n > 0 {
		out.violation = fmt.Sprintf("leftover znodes: %d recipe node(s) left in %s after every client finished, e.g. %s", n, r.ns, some[0])
	}
	return out
}

// violations is the check's violation for Checks.Violations.
func (l leftoverCheck) violations() []string {
	if l.violation == "" {
		return nil
	}
	return []string{l.violation}
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

// dispatch hands out open-loop arrivals: the intended start of each
// operation, on the pacer's schedule, to whichever client is free.
func (r *runner) dispatch() {
	pacer := scenarios.PacerFor(r.run)
	open, _ := pacer.(scenarios.OpenPacer)
	ws := r.windowStartTime()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for n := uint64(0); ; n++ {
		wait, stop := pacer.Pace(time.Since(ws), n)
		if stop {
			return
		}
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-r.stopCh:
				return
			}
		}
		intended := time.Now()
		if open != nil {
			intended = ws.Add(open.Due(n))
		}
		select {
		case r.tickets <- intended:
			continue
		default:
		}
		wait0 := time.Now()
		select {
		case r.tickets <- intended:
			r.blocked.Add(int64(time.Since(wait0)))
		case <-r.stopCh:
			r.blocked.Add(int64(time.Since(wait0)))
			return
		}
	}
}

// openRates are an open-model run's target and achieved rates, and a
// warning when it achieved less than its target, saying who could not
// keep up: when the dispatcher waited for a free client for a good part
// of the window, every client was busy (the server was too slow for the
// rate with this many clients in flight); otherwise the generator itself
// fell behind its schedule. Zero for closed loops and partial runs.
func (r *runner) openRates(partial bool, win time.Duration, throughput float64) (target, achieved float64, warning string) {
	if !r.run.Arrival.Kind.Open() || partial {
		return 0, 0, ""
	}
	target = r.run.Arrival.TargetRate()
	if win <= 0 {
		return target, 0, ""
	}
	// The schedule's operations: a queue's are the producers' puts.
	who := fmt.Sprintf("all %d clients", r.run.Clients)
	achieved = throughput
	if q, ok := r.work.(*queueWork); ok {
		achieved, who = float64(q.putIn.Load())/win.Seconds(), fmt.Sprintf("all %d producers", q.producers)
	}
	if achieved >= 0.95*target {
		return target, achieved, ""
	}
	warning = fmt.Sprintf("target rate %.1f/s, achieved %.1f/s (%.0f%%): ", target, achieved, 100*achieved/target)
	if blocked := time.Duration(r.blocked.Load()); blocked > win/10 {
		warning += fmt.Sprintf("%s were busy for %.1fs of the %.1fs window, so the server could not keep up with this rate with that many operations in flight (add clients, or lower the rate)",
			who, blocked.Seconds(), win.Seconds())
	} else {
		warning += "the load generator fell behind its own schedule (this machine could not keep up; lower the rate or spread the load over processes)"
	}
	return target, achieved, warning
}

// next waits until client c may start its next operation and returns its
// intended start (zero for closed loops); ok is false when the client must
// stop.
func (r *runner) next(first bool) (intended time.Time, ok bool) {
	return r.nextOp(first, true)
}

// nextOp is next, with the run's operation budget taken or not (workloads
// that count operations their own way).
func (r *runner) nextOp(first, budget bool) (intended time.Time, ok bool) {
	if r.stopping() {
		return time.Time{}, false
	}
	if r.run.Arrival.Kind.Open() {
		select {
		case t, ok := <-r.tickets:
			return t, ok && !r.stopping()
		case <-r.stopCh:
			return time.Time{}, false
		}
	}
	if first {
		select {
		case <-r.loopsGo:
		case <-r.stopCh:
			return time.Time{}, false
		}
	} else if think := r.run.Arrival.ThinkTime; think > 0 && !r.sleep(think) {
		return time.Time{}, false
	}
	if !budget {
		return time.Time{}, true
	}
	if n := r.started.Add(1); r.run.Ops > 0 && n > r.run.Ops {
		return time.Time{}, false
	}
	return time.Time{}, true
}

// sleep waits d, or returns false at once when the run stops.
func (r *runner) sleep(d time.Duration) bool {
	if d <= 0 {
		return !r.stopping()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.stopCh:
		return false
	}
}

// hold holds for d, cut short when the run stops or lost closes; it
// reports whether lost closed.
func (r *runner) hold(d time.Duration, lost <-chan struct{}) (wasLost bool) {
	if d <= 0 {
		select {
		case <-lost:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-r.stopCh:
		return false
	case <-lost:
		return true
	}
}

// recordAcquire records an acquisition's latency. Open-loop operations
// have an intended start (their place in the schedule): their latency is
// measured from there, as wrk2 does, and the time from the call is kept as
// the service time (metrics.Shard.RecordIntended). Closed loops have no
// schedule, so their latency runs from the call and nothing is corrected:
// HdrHistogram's correction assumes operations meant to start at a fixed
// interval, which a closed loop with think time does not have (with it,
// rwlock-mix showed a "corrected" p99 below the raw one).
func (r *runner) recordAcquire(c *client, phase metrics.Phase, call, intended, done time.Time) {
	if !intended.IsZero() {
		c.shard.RecordIntended(phase, done.Sub(call), done.Sub(intended))
		return
	}
	c.shard.Record(phase, done.Sub(call))
}

// opDone counts one completed operation, unless it completed after the
// window closed.
func (r *runner) opDone() bool {
	if r.stopping() {
		return false
	}
	r.ops.Add(1)
	r.rec.AddOps(1)
	return true
}

// session returns c's live session, replacing one the servers expired; nil
// when the run stops or no new session can be opened.
func (r *runner) session(c *client) *recipes.Session {
	s := c.session()
	if s == nil {
		return nil
	}
	select {
	case <-s.Done():
	default:
		return s
	}
	if r.stopping() {
		return nil
	}
	c.sess.Store(nil)
	r.alive.Add(-1)
	r.rec.AddSessions(-1)
	go s.Close() // release go-zookeeper's resources
	for !r.stopping() {
		ctx, cancel := context.WithCancel(r.opCtx)
		ns, err := r.params.open(ctx, c)
		cancel()
		if err == nil {
			if r.stopping() {
				ns.Close()
				return nil
			}
			c.sess.Store(ns)
			r.alive.Add(1)
			r.rec.AddSessions(1)
			r.counts.Add(figures.SessionsOpened, 1)
			return ns
		}
		r.opFailed(err)
		if !r.sleep(time.Second) {
			return nil
		}
	}
	return nil
}

// opFailed counts a failed operation by kind; operations cut short by the
// run's stop are not failures.
func (r *runner) opFailed(err error) {
	if err == nil || (r.stopping() && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))) {
		return
	}
	r.rec.AddError(errorKind(err))
}

// errorKind names the kind of a failed operation for "errors by kind".
func errorKind(err error) string {
	switch {
	case errors.Is(err, recipes.ErrSessionExpired), errors.Is(err, zk.ErrSessionExpired):
		return "session_expired"
	case errors.Is(err, recipes.ErrSessionClosed):
		return "session_closed"
	case errors.Is(err, recipes.ErrLost):
		return "lost"
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrClosing):
		return "connection_loss"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, errEarlyClose), errors.Is(err, ErrRefused):
		return "refused"
	case errors.Is(err, zk.ErrNoNode):
		return "no_node"
	case errors.Is(err, zk.ErrNodeExists):
		return "node_exists"
	case errors.Is(err, zk.ErrBadVersion):
		return "bad_version"
	case errors.Is(err, zk.ErrNoAuth), errors.Is(err, zk.ErrAuthFailed):
		return "auth"
	}
	return "other"
}

// releaseTimeout bounds one release attempt.
func (r *runner) releaseTimeout() time.Duration { return r.patience() + 5*time.Second }

// grantedEvent puts a granted session timeout shorter than the asked one
// on the timeline, at the window's start: every bound of the run counts
// on it.
func (r *runner) grantedEvent(at time.Time) (Event, bool) {
	granted, asked := r.grantedTimeout(), r.run.SessionTimeout
	if granted == asked || at.IsZero() {
		return Event{}, false
	}
	return Event{At: at, Kind: EventNote, Detail: fmt.Sprintf("the servers grant a session timeout of %v, not the %v asked (their maxSessionTimeout or minSessionTimeout)", granted, asked)}, true
}

// patience is how long the generator waits on the servers before it
// gives up on them (the drain, the wait after the window, the watchdog, a
// release attempt): the longer of the asked and the granted session
// timeouts. These are not safety bounds, which the recipes keep on the
// granted one: giving up at a granted 2 s stopped a run on a loaded
// machine whose server was fine ("lost the ZooKeeper server mid-run").
func (r *runner) patience() time.Duration { return max(r.run.SessionTimeout, r.grantedTimeout()) }

// grantedTimeout is the session timeout the servers grant the run's
// sessions (the admin session's, asked the same): a server's
// maxSessionTimeout may make it shorter than the scenario's. The faults'
// unavailability is measured against it.
func (r *runner) grantedTimeout() time.Duration {
	if r.admin != nil {
		return r.admin.Timeout()
	}
	return r.run.SessionTimeout
}

// release calls unlock until it succeeds, the session ends, or the
// release deadline passes; a release the server may not have seen is
// retried, since the node would block everyone until the session ends.
func (r *runner) release(s *recipes.Session, unlock func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), r.releaseTimeout())
	defer cancel()
	for {
		err := unlock(ctx)
		if err != nil && ctx.Err() != nil && s.Err() == nil {
			// Maybe still held: ending the session removes the node,
			// which would otherwise block every other client.
			s.Close()
		}
		if err == nil || errors.Is(err, recipes.ErrNotHeld) || ctx.Err() != nil {
			return err
		}
		select {
		case <-s.Done():
			return err
		default:
		}
		if errors.Is(err, recipes.ErrLost) {
			return err // released, but the grant had been lost
		}
		if werr := s.WaitConnected(ctx); werr != nil {
			return err
		}
	}
}

// ticker closes a metrics interval every Interval, adds the counters the
// recorder does not see (wake-ups, requests), watches for a lost server,
// and reports progress.
func (r *runner) ticker(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	var lastWake, lastReq int64
	var lastTick time.Time
	for {
		select {
		case <-stop:
			r.addCounters(&lastWake, &lastReq)
			return
		case <-ctx.Done():
			r.addCounters(&lastWake, &lastReq)
			return
		case now := <-t.C:
			r.addCounters(&lastWake, &lastReq)
			r.wire.deletes.prune(now)
			r.work.sample()
			if !r.windowStartTime().IsZero() && !r.stopping() {
				r.self.tick()
			}
			r.countUnreachable(now, &lastTick)
			iv := r.rec.Rotate(now)
			r.throughput = append(r.throughput, float64(iv.Counts.Ops)/max(iv.End.Sub(iv.Start).Seconds(), 1e-9))
			r.watchdog()
			state := "running"
			switch {
			case r.stopping():
				state = "stopping"
			case r.windowStartTime().IsZero():
				state = "ramping up"
			}
			var g *WaitGraph
			if inWindow := state == "running"; inWindow || r.opts.ProgressPhases {
				g = r.lockGraph(time.Now) // not the tick's time: clients moved since
				if inWindow {
					r.keepBusiest(g)
				}
			}
			r.progress(state, nil, g)
		}
	}
}

// countUnreachable adds the time since the last tick to r.unreachable
// when, in the window, the admin session (on the same servers as the
// clients) has no connection: the servers were unreachable, and the
// window measured less than its length. The scenario's own faults take
// servers away on purpose: not counted in runs that inject them.
func (r *runner) countUnreachable(now time.Time, last *time.Time) {
	prev := *last
	*last = now
	if prev.IsZero() || r.windowStartTime().IsZero() || r.stopping() || r.hasFaults() {
		return
	}
	if r.admin.State() != recipes.StateConnected {
		r.unreachable.Add(int64(now.Sub(prev)))
	}
}

// awaitServers waits up to a session timeout for the admin session to be
// connected, after the window: the checks that read the servers need it.
func (r *runner) awaitServers(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, r.patience())
	defer cancel()
	if err := r.admin.WaitConnected(wctx); err != nil {
		return fmt.Errorf("no connection to %s within the session timeout (%v) after the window", joinServers(r.opts.Servers), r.patience())
	}
	return nil
}

func (r *runner) addCounters(lastWake, lastReq *int64) {
	var wake int64
	for _, c := range r.clients {
		wake += c.wakeups()
	}
	req := r.wire.total.Load()
	r.rec.AddWakeups(wake - *lastWake)
	r.rec.AddZKRequests(req - *lastReq)
	*lastWake, *lastReq = wake, req
}

// watchdog ends the run when the servers have been unreachable for a whole
// session timeout: every session is then gone on their side.
func (r *runner) watchdog() {
	if d := r.admin.SuspendedFor(); d >= r.patience() && !r.stopping() && !r.serverFaultsOn() {
		last := r.adminLog.String()
		if last == "" {
			last = "no answer"
		}
		r.fail(fmt.Errorf("%w: no connection to %s for %v (last attempt: %s); the run was stopped",
			ErrServerLost, joinServers(r.opts.Servers), d.Round(time.Second), last))
	}
}

func joinServers(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// sessionsConnected counts the clients whose session is connected now.
func (r *runner) sessionsConnected() int {
	n := 0
	for _, c := range r.clients {
		if s := c.session(); s != nil && s.State() == recipes.StateConnected {
			n++
		}
	}
	return n
}

// QuietLock is how long a lock goes without a release before
// Progress.LocksQuiet counts it.
const QuietLock = 5 * time.Second

// locksQuiet counts the run's locks with no release in the last
// QuietLock, once the window has been open that long.
func (r *runner) locksQuiet(now time.Time) int {
	w, ok := r.work.(*lockWork)
	if !ok || r.windowElapsed() < QuietLock {
		return 0
	}
	n := 0
	for _, g := range w.guards {
		if rel := g.lastRelease.Load(); rel == nil || now.Sub(*rel) >= QuietLock {
			n++
		}
	}
	return n
}

// progress reports the run's state; intervals, when given, are the final
// timeline; lock is the lock's wait graph now (nil in the final report).
func (r *runner) progress(state string, intervals []metrics.IntervalStats, lock *WaitGraph) {
	if r.opts.Progress == nil {
		return
	}
	main := r.work.mainPhase()
	counts := r.rec.Counts()
	p := Progress{
		Name:              r.run.Name,
		Recipe:            r.run.Recipe,
		RunID:             r.opts.RunID,
		State:             state,
		Elapsed:           time.Since(r.start),
		Duration:          r.run.Duration,
		Window:            r.windowElapsed(),
		Clients:           r.run.Clients,
		SessionsAlive:     int(r.alive.Load()),
		SessionsConnected: r.sessionsConnected(),
		LocksQuiet:        r.locksQuiet(time.Now()),
		Ops:               r.ops.Load(),
		RampOps:           r.rampOps.Load(),
		MainPhase:         main,
		Main:              r.rec.Summary(main),
		Phases:            make(map[metrics.Phase]metrics.Summary),
		Errors:            counts.Errors,
		ErrorsByKind:      counts.ErrorsByKind,
		QueueDepth:        r.work.depth(),
		Violations:        r.chk.violations(),
		ViolationCounts:   r.chk.liveCounts(r.run.Recipe),
		Faults:            r.faultEvents(),
	}
	for _, ph := range append(metrics.Phases(), r.work.extraPhases()...) {
		if !r.opts.ProgressPhases && ph != main {
			continue
		}
		if s := r.rec.Summary(ph); s.Count > 0 {
			p.Phases[ph] = s
		}
	}
	if intervals == nil {
		p.Throughput = slices.Clone(r.throughput)
	}
	for _, iv := range intervals {
		p.Throughput = append(p.Throughput, float64(iv.Counts.Ops)/max(iv.Seconds(), 1e-9))
	}
	if n := len(p.Throughput); n > 0 {
		p.Rate = p.Throughput[n-1]
	}
	p.Totals = r.liveTotals()
	r.addLive(&p, lock)
	r.opts.Progress(p)
}

// liveTotals is the raw counts since the window opened, the servers' as
// of their last poll (absent until polled).
func (r *runner) liveTotals() figures.Totals {
	now := snapshot{at: time.Now(), requests: r.wire.total.Load()}
	for _, c := range r.clients {
		now.wakeups += c.wakeups()
	}
	before := r.before.Load()
	if before == nil {
		before = &snapshot{serverErr: errors.New("window not open")}
	}
	if c := r.serverNow.Load(); c != nil {
		now.server = *c
	} else {
		now.serverErr = errors.New("servers not polled yet")
	}
	return r.totalsBetween(*before, now, r.ops.Load())
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
