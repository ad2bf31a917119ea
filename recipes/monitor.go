package recipes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// monitorDelay is how long a grant lives before its monitor starts. Most
// critical sections under a busy lock are shorter, and then no goroutine,
// watch or notification is spent on them; a longer one is watched from
// then on. Loss within the delay is still caught: the monitor checks the
// session, the drops since the grant and the node's existence when it
// starts, and an Unlock before it checks the session.
const monitorDelay = 10 * time.Millisecond

// errDeletedByOther is part of a grant's reason when its node was deleted
// by another client.
var errDeletedByOther = errors.New("deleted by another client")

// deletedByOther reports a grant lost because its node was deleted by
// another client.
func (g *grant) deletedByOther() bool {
	select {
	case <-g.lost:
		return errors.Is(g.reason, errDeletedByOther)
	default:
		return false
	}
}

// lostAfter is how long a held grant survives a dropped connection: the
// policy (WithLostAfterSuspended), at most the session timeout the server
// granted. Asked at each drop: a reconnection may negotiate anew.
func (c *lockCore) lostAfter() time.Duration {
	d := c.s.Timeout()
	if c.cfg.lostAfterSet {
		d = min(d, c.cfg.lostAfter)
	}
	return d
}

// monitor watches one grant and closes its lost channel when the grant
// ends; once started, it is the only goroutine that closes it.
func (c *lockCore) monitor(g *grant) {
	defer close(g.lost)
	var (
		timer   *time.Timer
		timeout <-chan time.Time
	)
	// silence fires when the server may soon expire the session while
	// the connection still looks up: nothing read for nine tenths of a
	// session timeout since the server last renewed it (see silentFor).
	// go-zookeeper pings every third of it and drops a connection silent
	// for two thirds, so this matters only when its reads stall: a
	// process paused (GC, SIGSTOP) or starved. The tenth is the margin
	// for this timer's own lateness on a loaded machine: the server
	// grants the next waiter moments after the expiry. Re-armed at each
	// firing, about once a session timeout.
	silence := time.NewTimer(max(0, silenceLimit(c.s.Timeout())-c.s.silentFor()))
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		silence.Stop()
	}()
	drops := g.drops
	// Watch our own node unless the acquisition already does. Here rather
	// than on the hand-off path, and not at all when the lock is released
	// before this goroutine gets to it (a zero hold time needs no watch).
	// getData, not exists: on a missing node it leaves no watch behind.
	armed := g.own != nil
	arm := func() (ended bool) {
		if armed || g.releasing.Load() {
			return false
		}
		_, _, ch, err := c.s.Conn().GetW(g.node)
		switch {
		case err == nil:
			g.own, armed = ch, true
		case errors.Is(err, zk.ErrNoNode):
			if !g.releasing.Load() {
				g.reason = fmt.Errorf("%w: node %s %w", ErrLost, g.node, errDeletedByOther)
			}
			return true // otherwise our own Unlock deleted it: released
		}
		return false // connection trouble: again once connected
	}
	if arm() {
		return
	}
	for {
		changed, st := c.s.Changed()
		lostAfter := c.lostAfter()
		if lostAfter <= 0 && c.s.Suspensions() != drops {
			// Dropped and maybe already back: the policy tolerates none.
			g.reason = fmt.Errorf("%w: connection dropped (policy: no tolerance)", ErrLost)
			return
		}
		switch st {
		case StateExpired, StateClosed:
			select {
			case <-g.stop:
			default:
				g.reason = fmt.Errorf("%w: %w", ErrLost, c.s.Err())
			}
			return
		case StateSuspended:
			if timer == nil {
				timer = time.NewTimer(max(0, lostAfter-c.s.SuspendedFor()))
				timeout = timer.C
			}
		case StateConnected:
			if timer != nil {
				timer.Stop()
				timer, timeout = nil, nil
			}
			if arm() {
				return
			}
		}
		select {
		case <-g.stop:
			return
		case <-changed:
		case <-timeout:
			g.reason = fmt.Errorf("%w: connection down for %v (policy %v)", ErrLost, c.s.SuspendedFor().Round(time.Millisecond), lostAfter)
			return
		case <-silence.C:
			quiet, limit := c.s.silentFor(), silenceLimit(c.s.Timeout())
			switch {
			case c.s.State() != StateConnected:
				silence.Reset(limit) // the suspension's timer counts
			case quiet >= limit:
				g.reason = fmt.Errorf("%w: no word from the server for %v (session timeout %v): it may expire the session", ErrLost, quiet.Round(time.Millisecond), c.s.Timeout())
				return
			default:
				silence.Reset(limit - quiet)
			}
		case ev, ok := <-g.own:
			g.own = nil
			switch {
			case ok && ev.Type == zk.EventNodeDeleted:
				if !g.releasing.Load() {
					g.reason = fmt.Errorf("%w: node %s %w", ErrLost, g.node, errDeletedByOther)
				}
				// Otherwise our own Unlock deleted it: released.
				return
			case ok && ev.Type != zk.EventNotWatching:
				// Data changed under us: keep watching.
				armed = false
				if arm() {
					return
				}
			}
			// Not watching: the session ended or was closed; the state
			// change says which.
		}
	}
}

// silenceLimit is how long a grant's monitor lets the server be silent
// while the connection looks up (see monitor).
func silenceLimit(timeout time.Duration) time.Duration { return timeout - timeout/10 }

// watchOwn sets the watch on our own node that tells the grant's monitor
// when someone else deletes it, and reads its creation zxid (the fencing
// token). It runs before the first listing, off the hand-off path.
func (c *lockCore) watchOwn(ctx context.Context, node string, tr *tracer) (acquired, error) {
	// A child watch, not a data watch: it fires when the node is deleted
	// (an ephemeral node has no children to change), but not when its data
	// is written, so the release mark a holder writes on its own node
	// costs no notification to itself. Its stat is the node's.
	var (
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err := retryConn(ctx, c.s, func() (err error) {
		start := time.Now()
		_, stat, ch, err = c.s.Conn().ChildrenW(node)
		tr.request(OpWatch, start, err)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return acquired{}, c.ownGone(ctx, node)
	}
	if err != nil {
		return acquired{}, fmt.Errorf("recipes: watch %s: %w", node, err)
	}
	if stat.EphemeralOwner != c.s.ID() {
		// (Under the herd lock's fixed name) deleted and created since by
		// another session: its czxid is not our token.
		return acquired{}, c.ownGone(ctx, node)
	}
	return acquired{node: node, token: stat.Czxid, own: ch}, nil
}

// ownEvent handles an event of the watch on our own node while waiting:
// its deletion is the acquisition's loss; a write to it is re-armed.
func (c *lockCore) ownEvent(ctx context.Context, ev zk.Event, ok bool, a *acquired, tr *tracer) error {
	switch {
	case !ok || ev.Type == zk.EventNotWatching:
		return nil // the session's end follows
	case ev.Type == zk.EventNodeDeleted:
		return c.ownGone(ctx, a.node)
	}
	rearmed, err := c.watchOwn(ctx, a.node, tr)
	if err != nil {
		return err
	}
	a.own = rearmed.own
	return nil
}

// ownGone explains why our node is missing: deleted by another client,
// or with the session, which the server expires unknown to a process that
// was paused (its notifications of the deletion, sent before the expiry,
// read on resuming). While the server has been silent too long for the
// session to be sure (inDoubt), one request tells which.
func (c *lockCore) ownGone(ctx context.Context, node string) error {
	if err := c.s.alive(); err != nil {
		return err
	}
	if c.s.inDoubt() {
		if err := c.s.confirmAlive(ctx); sessionEnded(err) {
			return err
		}
	}
	return fmt.Errorf("%w: node %s %w", ErrLost, node, errDeletedByOther)
}
