package loadgen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/recipes"
)

// Progress: the once-per-interval ticker, the servers' poller and watchdog,
// and the Progress a run reports.

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
			r.digestsSeen = seenDigests(r.digestsSeen, c)
			if err == nil {
				r.serverNow.Store(&c)
			}
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
	// Only a connection down is the servers gone: an expired admin
	// session is the servers' answer (another client may have closed it),
	// replaced after the window (reviveAdmin).
	if st := r.admin.State(); st == recipes.StateSuspended || st == recipes.StateConnecting {
		r.unreachable.Add(int64(now.Sub(prev)))
	}
}

// awaitServers waits up to a session timeout for the admin session to be
// connected, after the window: the checks that read the servers need it.
func (r *runner) awaitServers(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, r.patience())
	defer cancel()
	err := r.admin.WaitConnected(wctx)
	if err != nil && r.reviveAdmin(wctx) == nil {
		err = r.admin.WaitConnected(wctx) // the new one's
	}
	if err != nil {
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
		Checks:            r.chk.liveChecks(r.run.Recipe),
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

// reviveAdmin replaces an expired admin session with a new one, after the
// window (the ticker and poller have stopped: r.admin has one reader
// then). The servers expire it when they lose quorum, or a member that
// held it stays away, for longer than its timeout (TestQueueChaos: a
// member's restart outlasted the next kill); the checks and the
// namespace's removal need a session, and any new one reads what the
// run left. It returns nil once r.admin is a new session, else why not.
func (r *runner) reviveAdmin(ctx context.Context) error {
	select {
	case <-r.admin.Done():
	default:
		return nil // alive: connected or reconnecting
	}
	why := r.admin.Err()
	fresh, err := r.openAdmin(ctx)
	if err != nil {
		return err
	}
	r.admin.Close()
	r.admin = fresh
	r.logf("the run's admin session ended (%v): a new one checks the run and removes its namespace", why)
	return nil
}

// CheckerRecvBuffer is the largest reply a checker session accepts: the
// admin session here, and a distributed run's sessions that settle its
// queue (loadrun). The checks list what the run left, and queue-chaos
// left 21,000 to 25,000
// queue items, a listing of 1.2-1.4 MB, more than the 1 MiB default
// (TestQueueCheckListsLargeQueue). Assumptions:
//   - go-zookeeper allocates min(1.5 MiB, this) per connection and grows
//     the buffer only to the length of a reply that arrives: the limit
//     costs nothing until a listing that large does.
//   - The server sends a reply of any size: its jute.maxbuffer (1 MiB by
//     default) bounds what it reads (requests, transactions), not what it
//     writes (ZooKeeper 3.8; the test lists 1.4 MB from a default server).
//     A server that refused one would close the connection: the check
//     then says "not checked" and why (listingErr).
//
// 64 MiB lists about a million queue items (about 60 bytes a name).
const CheckerRecvBuffer = 64 << 20

// adminOptions are the options of every session that sets up, checks or
// removes the run's namespace.
func (r *runner) adminOptions() []recipes.SessionOption {
	return append(slices.Clone(r.opts.SessionOptions),
		recipes.WithSessionTimeout(r.run.SessionTimeout),
		recipes.WithBufferSizes(recipes.DefaultBufferSize, CheckerRecvBuffer))
}

// listingErr explains a failed listing of dir by the admin session: a
// reply larger than its receive buffer, or else err as it is.
func (r *runner) listingErr(dir string, err error, tooLargeBefore int64) error {
	if n, last := r.admin.RepliesTooLarge(); n > tooLargeBefore {
		return fmt.Errorf("the listing of %s is larger than the checker's %d MiB receive buffer (%s): %w",
			dir, CheckerRecvBuffer>>20, last, recipes.ErrReplyTooLarge)
	}
	if errors.Is(err, zk.ErrConnectionClosed) {
		return fmt.Errorf("the connection to the server closed while it listed %s (a reply larger than the server's jute.maxbuffer is one cause): %w", dir, err)
	}
	return err
}

// openAdmin opens an admin session: the scenario's session timeout, its
// log line kept for messages (r.adminLog).
func (r *runner) openAdmin(ctx context.Context) (*recipes.Session, error) {
	opts := append(r.adminOptions(), recipes.WithLogger(&r.adminLog))
	actx, cancel := context.WithTimeout(ctx, max(r.run.SessionTimeout, 5*time.Second))
	defer cancel()
	return recipes.NewSession(actx, r.opts.Servers, opts...)
}

// ProcessLabel is the label of the process with pid on host, in the
// series of a distributed run's metrics.
func ProcessLabel(host string, pid int) string { return fmt.Sprintf("%s:%d", host, pid) }
