package distrib

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/zkherd/zkherd/internal/pkgerr"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// Outcome is what one run of the plan gave this process: its own result,
// and for the starter the merged one.
type Outcome struct {
	Local  *loadgen.Result
	Merged *loadgen.Result
}

// Options say how Step runs a step.
type Options struct {
	// Load is the options of every loadgen.Run; Namespace, SharedNamespace
	// and RunID are set by Step.
	Load loadgen.Options
	// JoinTimeout bounds the wait for every process at each barrier.
	JoinTimeout time.Duration
	// CoordRequests, if set, counts the requests this process's
	// coordination sent so far (RequestCounter); its part carries the
	// count. CoordWhere names where the coordination went, for the
	// merged result's note.
	CoordRequests func() int64
	CoordWhere    string
	// Departed, when set, is closed as soon as one of the processes
	// launched for the run (--spawn, --hosts) has ended; Departure says
	// which and how. The starter then stops waiting at a barrier at once,
	// rather than for the join timeout: that process will not arrive.
	Departed  <-chan struct{}
	Departure func() string
	// OnProcessInterval, if set, receives in the starter the values each
	// other process recorded since its previous live part, as closed
	// intervals, with the process's label (loadgen.ProcessLabel); this
	// process's own go to Load.OnInterval.
	OnProcessInterval func(process string, phase metrics.Phase, iv *metrics.PhaseInterval)
}

// ErrDeparted means a process launched for the run ended before every
// process arrived at a barrier.
var ErrDeparted = errors.New("a launched process ended")

// untilDeparted returns a ctx that ends with ErrDeparted, explained, when
// opts.Departed is closed.
func untilDeparted(ctx context.Context, opts Options, runID string, step int) (context.Context, func()) {
	if opts.Departed == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-opts.Departed:
			why := "a launched process ended"
			if opts.Departure != nil {
				why = opts.Departure()
			}
			cancel(fmt.Errorf("%w: run %s: %s before every process arrived%s; stopped waiting for it (its output above says why)", ErrDeparted, runID, why, stepName(step)))
		case <-ctx.Done():
		case <-done:
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// DefaultJoinTimeout is how long processes wait for each other.
const DefaultJoinTimeout = 2 * time.Minute

// Step runs run number step of the plan: it waits for every process at a
// barrier, runs the scenario with this process's clients in the shared
// namespace, and publishes the result; the starter (process 0) then
// collects every process's result and merges them.
func (m *Member) Step(ctx context.Context, step int, opts Options) (_ Outcome, err error) {
	defer marked(&err)
	if opts.JoinTimeout <= 0 {
		opts.JoinTimeout = DefaultJoinTimeout
	}
	run := m.plan.Runs[step]
	bctx, stopDeparted := untilDeparted(ctx, opts, m.plan.RunID, step)
	err = m.Barrier(bctx, step, opts.JoinTimeout)
	stopDeparted()
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		return Outcome{}, err
	}
	lo := opts.Load
	lo.Namespace = m.Namespace(step)
	lo.SharedNamespace = true
	lo.NamespaceClients = run.Clients * m.plan.Processes
	lo.Process, lo.Processes = m.index, m.plan.Processes
	lo.RunID = fmt.Sprintf("%s.%d.p%d", m.plan.RunID, step, m.index)
	// The live part, published while the run goes (live.go).
	l := newLive()
	lo.OnInterval = chain2(lo.OnInterval, l.interval)
	lo.Progress = chain1(lo.Progress, l.progress)
	var v *view
	if m.index == 0 && opts.Load.Progress != nil {
		// The starter's reports show every process (view.go).
		v = newView(l, opts.OnProcessInterval)
		show := opts.Load.Progress
		lo.Progress = func(p loadgen.Progress) { l.progress(p); show(v.merged(p)) }
	}
	runCtx, stopWatch := m.watchRun(ctx)
	liveCtx, stopLive := context.WithCancel(runCtx)
	var live sync.WaitGroup
	live.Add(1)
	go func() {
		defer live.Done()
		m.publishLive(liveCtx, step, l)
	}()
	if v != nil {
		live.Add(1)
		go func() {
			defer live.Done()
			m.pollView(liveCtx, step, v, func(line string) {
				if lo.Logf != nil {
					lo.Logf("%s", line)
				}
			})
		}()
	}
	local, err := loadgen.Run(runCtx, run, lo)
	stopLive()
	live.Wait()
	cause := context.Cause(runCtx)
	stopWatch()
	if errors.Is(cause, ErrStarterGone) {
		return Outcome{}, m.starterGone()
	}
	if errors.Is(cause, ErrCancelled) {
		return Outcome{}, fmt.Errorf("%w: %s", ErrCancelled, m.plan.RunID)
	}
	if err != nil {
		// Say so, so that the starter does not wait for results that
		// will not come.
		host, _ := os.Hostname()
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.JoinTimeout)
		m.Publish(pctx, step, &Part{Host: host, PID: os.Getpid(), Error: pkgerr.Reason(err).Error()})
		cancel()
		return Outcome{}, err
	}
	part, err := FromResult(m.index, local)
	if err != nil {
		return Outcome{}, err
	}
	part.CoordRequests = -1 // not counted
	if opts.CoordRequests != nil {
		part.CoordRequests = opts.CoordRequests()
	}
	// The servers may serve no connection for a while after a large
	// run's window (its sessions closing): Publish retries until the
	// join timeout, as long as the others wait for this process.
	pctx, cancel := context.WithTimeout(ctx, opts.JoinTimeout)
	err = m.Publish(pctx, step, part)
	cancel()
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Local: local}
	if m.index == 0 {
		parts, lost, cerr := m.Collect(ctx, step, collectTimeout(run, opts.JoinTimeout))
		if cerr != nil && !errors.Is(cerr, ErrMissing) {
			return Outcome{}, cerr
		}
		var failed []string
		parts = slices.DeleteFunc(parts, func(p *Part) bool {
			if p.Error != "" {
				failed = append(failed, fmt.Sprintf("process %d (%s, pid %d) failed: %s", p.Process, p.Host, p.PID, p.Error))
			}
			return p.Error != ""
		})
		parts = append(parts, m.lostParts(step, lost, &failed)...)
		merged, err := Merge(run, m.plan.RunID, m.root, parts)
		if err != nil {
			return Outcome{}, err
		}
		if cerr != nil {
			merged.Partial = true
			merged.Notes = append(merged.Notes, pkgerr.Reason(cerr).Error())
		}
		if len(failed) > 0 {
			merged.Partial = true
			merged.Checks.NotChecked = append(merged.Checks.NotChecked, failed...)
		}
		if opts.CoordWhere != "" {
			merged.Notes = append(merged.Notes, coordNote(opts.CoordWhere, parts))
		}
		settled := m.settleQueue(ctx, step, run, parts, merged)
		m.checkLeftovers(ctx, step, merged, waitLeftovers(run, lost), expiryWait(run))
		checkHistories(ctx, m.plan.Processes, parts, merged, settled)
		merged.Checks.Passed = len(merged.Checks.Violations) == 0 && len(merged.Checks.NotChecked) == 0
		o.Merged = merged
	}
	return o, nil
}

// collectTimeout bounds the wait for every process's results of run: its
// ramp-up, duration, stop and a margin for processes that arrived late.
func collectTimeout(run scenarios.Run, join time.Duration) time.Duration {
	d := run.Duration
	if d <= 0 {
		d = 10 * time.Minute
	}
	return scenarios.RampFor(run).Done() + d + 2*run.SessionTimeout + time.Minute + join
}

// checkLeftovers counts recipe nodes left in the shared namespace once
// every process has published (and so has finished its clients).
//
// A process that died leaves its ephemeral nodes until the servers expire
// its sessions: the check then looks again for up to wait while nodes
// are left. So does a session whose close never reached the servers (its
// connection down when its client closed it: a run's end on busy servers
// closes thousands at once), whose nodes stay until the servers expire
// it: the check looks again for up to expiry (twice the session timeout
// and a margin) before it calls what is still there left, and says what
// went meanwhile. A node still there then was left by a client, not by a
// lost close.
func (m *Member) checkLeftovers(ctx context.Context, step int, res *loadgen.Result, wait, expiry time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second+max(wait, expiry))
	defer cancel()
	conn, chroot := m.workConn()
	ns := chroot + m.Namespace(step)
	n, some, err := loadgen.Leftovers(ctx, conn, ns)
	first, firstSome, began := n, some, time.Now()
	for deadline := began.Add(max(wait, expiry)); err == nil && n > 0 && time.Now().Before(deadline); {
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		n, some, err = loadgen.Leftovers(ctx, conn, ns)
	}
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("could not check the shared namespace for leftover znodes: %v", err))
		return
	}
	if gone := first - n; gone > 0 && wait == 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d node(s) found in the shared namespace after every process finished (e.g. %s) went within %v: the servers removed them on expiring sessions whose close had not reached them",
			gone, firstSome[0], time.Since(began).Round(time.Second)))
	}
	if n > 0 {
		res.Checks.LeftoverZnodes += n
		res.Checks.LeftoverPaths = append(res.Checks.LeftoverPaths, some...)
		res.Checks.Violations = append(res.Checks.Violations,
			fmt.Sprintf("leftover znodes: %d recipe node(s) left in the shared namespace after every process finished, e.g. %s", n, some[0]))
		res.Checks.Passed = false
	}
}

// expiryWait is how long the servers may take to expire a session of
// run whose close did not reach them.
func expiryWait(run scenarios.Run) time.Duration { return 2*run.SessionTimeout + 5*time.Second }

// lostParts returns the last live parts of the processes that died
// before publishing their results, marked lost, and says in failed what
// each one's loss means for the run.
func (m *Member) lostParts(step int, lost map[int]memberInfo, failed *[]string) []*Part {
	var out []*Part
	for _, i := range slices.Sorted(maps.Keys(lost)) {
		mi := lost[i]
		who := fmt.Sprintf("process %d (%s, pid %d)", i, mi.Host, mi.PID)
		p := m.readLive(step, i)
		if p == nil {
			*failed = append(*failed, who+" was lost (its session ended) before it published anything: its clients' figures are missing")
			continue
		}
		p.Lost = true
		out = append(out, p)
		*failed = append(*failed, fmt.Sprintf("%s was lost (its session ended) mid-run: its clients' figures are those of its last live part, %s into the run (%d operations); what it did after, and its own end-of-run checks, are unknown",
			who, p.At.Sub(p.Start).Round(100*time.Millisecond), p.Ops))
	}
	return out
}

// chain1 and chain2 call a caller's hook, if any, then this package's.
func chain1[A any](a, b func(A)) func(A) {
	if a == nil {
		return b
	}
	return func(x A) { a(x); b(x) }
}

func chain2[A, B any](a, b func(A, B)) func(A, B) {
	if a == nil {
		return b
	}
	return func(x A, y B) { a(x, y); b(x, y) }
}

// waitLeftovers is how long the leftover check waits for the sessions of
// processes that died to expire: none without such processes.
func waitLeftovers(run scenarios.Run, lost map[int]memberInfo) time.Duration {
	if len(lost) == 0 {
		return 0
	}
	return expiryWait(run)
}

// coordNote says where the run's coordination went and what it cost, in
// requests counted by each process up to its part.
func coordNote(where string, parts []*Part) string {
	var n int64
	for _, p := range parts {
		if p.CoordRequests < 0 || p.Lost {
			return fmt.Sprintf("coordination (plan, barriers, parts, live parts) on %s; its requests were not counted by every process (TLS connections, or a process lost)", where)
		}
		n += p.CoordRequests
	}
	return fmt.Sprintf("coordination (plan, barriers, parts, live parts) on %s: %d requests over the %d processes up to their results", where, n, len(parts))
}

// stepName names run step in a message: nothing for the first (most
// plans have one run), "at run N" for the others.
func stepName(step int) string {
	if step == 0 {
		return ""
	}
	return fmt.Sprintf(" at run %d", step+1)
}
