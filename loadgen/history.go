package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
)

// checkBudget bounds the whole linearizability check after a run (each
// partition has its own bound inside it); partitions left unchecked are
// reported as such.
const checkBudget = 5 * time.Minute

// checkHistory merges the clients' histories, once every client has
// stopped, and checks it. A queue or barrier run spread over processes is
// not checked here (nil result): see distrib.
func (r *runner) checkHistory(ctx context.Context) (*oracle.History, *oracle.Result) {
	model, limit := r.work.model()
	h := r.hist.History(model, limit)
	if r.opts.SharedNamespace {
		h.Scope = "process " + r.opts.RunID + " (its own clock; the grants of every process are ordered by the fencing check)"
		if r.run.Recipe.Spec().SpansProcesses {
			// Items and barrier rounds span the processes: one process's
			// operations alone are not a history of the queue or the
			// barrier. The process that merges the run checks them all.
			return h, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkBudget)
	defer cancel()
	return h, oracle.Check(ctx, h, oracle.Options{})
}

// withLinearizability adds the check's verdict to the run's checks: a
// violation fails the run, a check that could not finish warns.
func withLinearizability(c Checks, lin *oracle.Result) Checks {
	if lin == nil {
		return c
	}
	switch lin.Result {
	case oracle.ResultViolation:
		c.Violations = append(c.Violations, "linearizability: "+lin.Violation.Detail)
		c.Passed = false
	case oracle.ResultUnknown:
		c.Warnings = append(c.Warnings, fmt.Sprintf("linearizability not checked: %s", lin.NotChecked[0]))
	}
	return c
}

// acquireKinds are the history's kinds of a grant and its release.
func (h *held) acquireKinds() (oracle.Kind, oracle.Kind) {
	if h.phase == ReadAcquire {
		return oracle.ReadAcquire, oracle.ReadRelease
	}
	return oracle.Acquire, oracle.Release
}

// serverValue is what the server said of a grant: its fencing token, or
// its node's sequence number.
func (h *held) serverValue() int64 {
	switch {
	case h.token != nil:
		return int64(h.token())
	case h.node != nil:
		return seqOf(h.node())
	}
	return oracle.NoValue
}

// recordRelease records how a grant ended. A grant the holder was told it
// lost (while holding, or by its release) may have been ended by the
// server at any moment since it was given: its release is called at the
// grant, or just after the holder's last use of it (a holder ignoring
// Lost(): the model needs the grant held for each use anyway, and the
// client's operations stay one at a time, as Jepsen's histories are), and
// returns once the holder has stopped acting on it (its release returned).
// A release that failed otherwise has an unknown outcome.
func recordRelease(b *oracle.Buffer, kind oracle.Kind, part int32, gs *grantState, granted, relStart time.Time, lost bool, err error) {
	switch {
	case lost || errors.Is(err, recipes.ErrLost) || errors.Is(err, recipes.ErrNotHeld):
		since := granted
		if gs != nil && gs.lastUse.After(since) {
			since = gs.lastUse.Add(time.Nanosecond)
		}
		b.Add(kind, part, since, time.Now(), oracle.Lost, oracle.NoValue)
	case err != nil:
		b.Add(kind, part, relStart, time.Now(), oracle.Unknown, oracle.NoValue)
	default:
		b.Add(kind, part, relStart, time.Now(), oracle.OK, oracle.NoValue)
	}
}

// write writes the holder's token to the guarded resource; a write made
// knowing the grant was lost (a holder ignoring Lost()) is a use of the
// lost grant in the history.
func (gs *grantState) write(lost bool, at time.Time) {
	gs.fence.write(gs.token, gs.session, lost, at)
	if lost {
		gs.hist.Add(oracle.Use, gs.part, at, at, oracle.OK, int64(gs.token))
		gs.lastUse = at
	}
}

// WithLinearizability adds a history check's verdict to checks: a
// violation fails the run, a check that could not finish warns.
func WithLinearizability(c Checks, lin *oracle.Result) Checks { return withLinearizability(c, lin) }

// LinearizabilityCheck is the oracle's verdict as one of the run's
// checks: 1 for a violation, 0 for none, not checked (below 0) when the
// search could not finish; its value is the oracle's line.
func LinearizabilityCheck(lin *oracle.Result) CheckOutcome {
	o := CheckOutcome{Key: "linearizability", Label: "linearizability", Failure: true,
		Group: GroupLinearizability, Text: lin.Line()}
	switch lin.Result {
	case oracle.ResultViolation:
		o.Count = 1
	case oracle.ResultOK:
	default:
		o.Count = -1
	}
	return o
}
