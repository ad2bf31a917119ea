package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/recipes"
)

// Per-operation helpers of the workloads: recording an acquisition, the
// operation budget, a client's session, failures by kind, releases and the
// patience they get.

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

// opDone counts one completed operation and records its values with
// record (nil: none), unless it completed after the window closed. The
// count and the values land on the same side of the ramp-up's end: the
// split (runner.splitRamp) takes the ramp-up's operations and its
// histograms at one instant, under splitMu, so an operation straddling
// it is not counted in one and recorded in the other.
func (r *runner) opDone(record func()) bool {
	r.splitMu.RLock()
	defer r.splitMu.RUnlock()
	if r.stopping() {
		return false
	}
	r.ops.Add(1)
	r.rec.AddOps(1)
	if record != nil {
		record()
	}
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
	case errors.Is(err, recipes.ErrOutcomeUnknown):
		// Before the connection errors it usually wraps: what the caller
		// must handle is that a write may or may not have happened.
		return "outcome_unknown"
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
// An error wrapping ErrLost ends the retries only once the grant is gone:
// stillHeld (nil when the recipe's release always ends its grant) says
// whether the recipe kept it for a later release (a lock's Unlock that
// could not confirm its delete after the grant was lost). Returning with
// it kept made every later Lock on the value fail at once, ErrLost, a
// million times a second (fair-lock-chaos, a holder resumed after a
// pause past its session). Giving up with the grant maybe held ends the
// session, which removes the node; the client's loop opens a new one.
func (r *runner) release(s *recipes.Session, unlock func(context.Context) error, stillHeld func() bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), r.releaseTimeout())
	defer cancel()
	for {
		err := unlock(ctx)
		if err == nil || errors.Is(err, recipes.ErrNotHeld) {
			return err
		}
		if errors.Is(err, recipes.ErrLost) && (stillHeld == nil || !stillHeld()) {
			return err // released, but the grant had been lost
		}
		select {
		case <-s.Done():
			return err
		default:
		}
		if ctx.Err() != nil || s.WaitConnected(ctx) != nil {
			if s.Err() == nil {
				// Maybe still held: ending the session removes the node,
				// which would otherwise block every other client.
				s.Close()
			}
			return err
		}
	}
}
