package distrib

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/zkherd/zkherd/internal/pkgerr"

	"github.com/zkherd/zkherd/loadgen"
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
	if err := m.Barrier(ctx, step, opts.JoinTimeout); err != nil {
		return Outcome{}, err
	}
	lo := opts.Load
	lo.Namespace = m.Namespace(step)
	lo.SharedNamespace = true
	lo.NamespaceClients = run.Clients * m.plan.Processes
	lo.Process, lo.Processes = m.index, m.plan.Processes
	lo.RunID = fmt.Sprintf("%s.%d.p%d", m.plan.RunID, step, m.index)
	local, err := loadgen.Run(ctx, run, lo)
	if err != nil {
		// Say so, so that the starter does not wait for results that
		// will not come.
		host, _ := os.Hostname()
		m.Publish(context.WithoutCancel(ctx), step, &Part{Host: host, PID: os.Getpid(), Error: pkgerr.Reason(err).Error()})
		return Outcome{}, err
	}
	part, err := FromResult(m.index, local)
	if err != nil {
		return Outcome{}, err
	}
	if err := m.Publish(ctx, step, part); err != nil {
		return Outcome{}, err
	}
	o := Outcome{Local: local}
	if m.index == 0 {
		parts, cerr := m.Collect(ctx, step, collectTimeout(run, opts.JoinTimeout))
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
		settled := m.settleQueue(ctx, step, run, parts, merged)
		m.checkLeftovers(ctx, step, merged)
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
func (m *Member) checkLeftovers(ctx context.Context, step int, res *loadgen.Result) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, some, err := loadgen.Leftovers(ctx, m.s.Conn(), m.chroot+m.Namespace(step))
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("could not check the shared namespace for leftover znodes: %v", err))
		return
	}
	if n > 0 {
		res.Checks.LeftoverZnodes += n
		res.Checks.LeftoverPaths = append(res.Checks.LeftoverPaths, some...)
		res.Checks.Violations = append(res.Checks.Violations,
			fmt.Sprintf("leftover znodes: %d recipe node(s) left in the shared namespace after every process finished, e.g. %s", n, some[0]))
		res.Checks.Passed = false
	}
}
