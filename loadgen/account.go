package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkherd/zkherd/figures"
)

// Accounting: the counts at the window's ends, the Result assembled once
// (account), the checks' figures and the leftover check.

// snapshot is what the herd measures compare between the window's ends.
type snapshot struct {
	// counts is the counted figures (r.counts) the window's are taken
	// from: the ramp-up's when the window opened after it, nil when the
	// window counts from zero. Set before the snapshot is published
	// (noteBefore) and never written after: the ticker reads it for the
	// live figures while the run goes on.
	counts    figures.Totals
	at        time.Time
	wakeups   int64
	requests  int64
	byKind    map[string]int64
	server    serverCounters
	serverErr error
}

func (r *runner) noteBefore(s snapshot) { r.before.Store(&s) }

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
func (r *runner) account(ctx context.Context, before snapshot, end windowEnd) *Result {
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
		genNotes = []string{gen.note(r.opts.Name)}
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
			if r.run.Recipe.Spec().Items {
				work.notChecked = []string{"lost items: " + err.Error()}
			}
		} else {
			conn := r.admin.Conn() // a new one if the first expired (reviveAdmin)
			work = r.work.finish(fin, conn)
			if r.opts.SharedNamespace {
				left = r.checkOwnLeftovers(fin, conn)
			} else {
				left = r.checkLeftovers(fin, conn)
			}
		}
	}
	if len(r.opts.Members) > 1 {
		if w := replicaWarning(context.WithoutCancel(ctx), r.opts.Members, r.opts.TLS, r.digestsSeen); w != "" {
			work.warnings = append(work.warnings, w)
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
		Releases:        r.counts.Get(figures.Releases) - before.counts[figures.Releases],
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
		QueueItems:      work.ledger,
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
	for k, n := range before.counts {
		t[k] -= n
	}
	t[figures.Operations] = ops
	t[figures.Wakeups] = after.wakeups - before.wakeups
	t[figures.ZKRequests] = after.requests - before.requests
	// The window's length, over which its counts are taken: before it
	// opens (live progress during the ramp-up), the time since the first
	// session, over which the counts then run.
	switch {
	case !before.at.IsZero():
		t[figures.WindowMs] = after.at.Sub(before.at).Milliseconds()
	case !r.start.IsZero():
		t[figures.WindowMs] = after.at.Sub(r.start).Milliseconds()
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
	warnings = append(warnings, r.chk.skippedWarnings()...)
	return Checks{
		MutualExclusionViolations: r.chk.mutex.Load(),
		FencingViolations:         r.chk.fencing.Load(),
		FIFOBypasses:              r.chk.fifo.Load(),
		MaxBypass:                 r.chk.maxBypass.Load(),
		FIFOChecked:               r.run.Recipe.Spec().FIFO,
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
	tooLarge, _ := r.admin.RepliesTooLarge()
	n, some, err := leftovers(ctx, conn, r.ns)
	if err != nil {
		return notLookedAt(r.listingErr(r.ns, err, tooLarge))
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
