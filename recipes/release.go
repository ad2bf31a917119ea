package recipes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

func (c *lockCore) unlock(ctx context.Context) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.leave()
	c.mu.Lock()
	g := c.g
	switch {
	case c.count == 0:
		c.mu.Unlock()
		return fmt.Errorf("recipes: unlock %s: %w", c.path, ErrNotHeld)
	case c.count > 1:
		c.count--
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()

	tr := tracer{t: c.cfg.trace}
	start := time.Now()
	g.releasing.Store(true)
	var (
		err  error
		why  error // why the grant was lost, if the release shows it
		kept bool
	)
	switch {
	case g.deletedByOther():
		// (Deleting it anyway could remove a node someone else created
		// since under the herd lock's fixed name.)
	case c.keep != nil && c.keep(ctx, g.node):
		// Handed on to another side of the same owner, which deletes it.
		kept = true
		if e := c.s.alive(); e != nil {
			// No server confirmed anything: the session ended, and the
			// grant with it.
			why = fmt.Errorf("%w: %w before the release", ErrLost, e)
		}
	default:
		var how gone
		how, err = c.deleteOwn(ctx, g.node, int64(g.token), g.marked, &tr)
		switch {
		case how == goneByOther && !g.deleteSent:
			why = fmt.Errorf("%w: node %s %w", ErrLost, g.node, errDeletedByOther)
		case how == goneWithSession:
			// A holder paused or cut off past its session learns it
			// here: a waiter may have been granted meanwhile.
			why = fmt.Errorf("%w: %w before the release", ErrLost, c.s.Err())
		}
	}
	if err == nil && !kept && c.released != nil {
		// Also when the node was deleted by another client: the grant
		// ended all the same, and what it kept must go with it (issue 21:
		// a downgraded RWLock's write node stayed).
		c.released(ctx)
	}
	if t := c.cfg.trace; t != nil && t.Released != nil {
		t.Released(ReleaseStats{Start: start, Done: time.Now(), Node: g.node, Requests: tr.requests, Err: err})
	}
	if err != nil {
		g.releasing.Store(false)
		// The grant may be lost already (Lost closed: its session silent or
		// down past the policy, or ended): then the caller must hear that
		// first, whatever became of the delete. A holder resumed after a
		// pause past its session, whose reconnection takes longer than
		// the read-back's bound, got only "outcome unknown" (issue 21).
		lost := c.lostBy(g)
		if errors.Is(err, ErrOutcomeUnknown) {
			// A delete may have been carried out: a later Unlock that
			// finds the node gone must not blame another client.
			g.deleteSent = true
			if lost != nil {
				return fmt.Errorf("recipes: unlock %s: %w; the release's outcome is unknown too: %w", c.path, lost, err)
			}
			return fmt.Errorf("recipes: unlock %s: held until an Unlock confirms the release: %w", c.path, err)
		}
		if lost != nil {
			return fmt.Errorf("recipes: unlock %s: %w; its node may remain until an Unlock deletes it or the session ends: %w", c.path, lost, err)
		}
		// No delete reached the server: still held. A later Unlock retries.
		return fmt.Errorf("recipes: unlock %s: still held: %w", c.path, err)
	}
	if g.start.Stop() {
		// Released before the monitor started: this goroutine is the one
		// that closes lost.
		if err := c.s.alive(); err != nil && why == nil {
			why = fmt.Errorf("%w: %w", ErrLost, err)
		}
		g.reason = why
		close(g.lost)
	} else {
		close(g.stop)
		<-g.lost // the monitor ends promptly once stop is closed
	}
	c.mu.Lock()
	if g.reason == nil {
		// The monitor, ended, saw nothing (it may have taken the node's
		// absence for our release), but the release found the grant lost.
		g.reason = why
	}
	reason := g.reason
	c.g, c.last, c.count = nil, g, 0
	c.mu.Unlock()
	if reason != nil {
		return fmt.Errorf("recipes: unlock %s: released, but %w", c.path, reason)
	}
	return nil
}

// lostBy says why g is lost, if it is already known to be (its Lost
// closed, or its session ended), for an Unlock that could not finish. nil
// otherwise. Only the goroutine in unlock calls it.
func (c *lockCore) lostBy(g *grant) error {
	select {
	case <-g.lost:
		if g.reason != nil {
			return g.reason
		}
	default:
	}
	if e := c.s.alive(); e != nil {
		return fmt.Errorf("%w: %w", ErrLost, e)
	}
	return nil
}

// gone says how a node deleteOwn reports gone went.
type gone int

const (
	goneDeleted gone = iota // deleted by this call, confirmed by the server
	goneByOther             // already absent: someone else deleted it
	// goneWithSession: the session ended (expired or closed) before the
	// deletion was confirmed; the server removed the node with it, at a
	// time this client does not know. For a grant that is never a clean
	// release: another session may have been granted since.
	goneWithSession
)

// deleteOwn deletes our node and reports nil once it is certainly gone,
// and how (see gone). byOther: already absent at the first attempt
// (after an attempt whose reply was lost, absence is taken for ours).
// asHolder writes the release mark in the deletion's transaction (see
// Lock.acquire); it must be false for a node that was never granted.
// czxid is the node's creation zxid when known (a grant's token), else 0.
func (c *lockCore) deleteOwn(ctx context.Context, node string, czxid int64, asHolder bool, tr *tracer) (gone, error) {
	if c.fixedName {
		// The herd lock's node has the same name for every holder: after
		// another client deleted ours, a waiter may hold the lock with a
		// node of that name, which a delete by name would remove. Only the
		// node created at our grant's zxid, by our session, is deleted.
		// (Two more requests than a delete by name; the herd lock exists to
		// show a herd, not to be fast.)
		deleted, err := deleteIfOwned(ctx, c.s, node, czxid, asHolder, tr)
		switch {
		case sessionEnded(err):
			return goneWithSession, nil
		case err == nil && !deleted:
			return goneByOther, nil
		}
		return goneDeleted, err
	}
	start := time.Now()
	err := deleteAt(c.s, node, asHolder, -1)
	tr.request(OpDelete, start, err)
	err = sessionErr(c.s, err)
	if isConnErr(err) {
		// The reply was lost: the deletion may have been carried out.
		// The read-back must be synced, and goes on past ctx's end (for
		// up to the session timeout) so that Unlock says what it did
		// (deleteIfOwned).
		bounded, cancel := pastCtx(ctx, c.s)
		defer cancel()
		_, err = deleteIfOwned(bounded, c.s, node, czxid, asHolder, tr)
		if sessionEnded(err) {
			// (Whether our delete was applied before the session ended
			// is unknown: never a clean release.)
			return goneWithSession, nil
		}
		if err != nil && !errors.Is(err, ErrOutcomeUnknown) {
			err = fmt.Errorf("%w: delete of %s: %w", ErrOutcomeUnknown, node, err)
		}
		return goneDeleted, err
	}
	switch {
	case errors.Is(err, zk.ErrNoNode):
		if c.s.alive() != nil {
			// The session ended meanwhile, and the node with it.
			return goneWithSession, nil
		}
		return goneByOther, nil
	case err == nil:
		return goneDeleted, nil
	case sessionEnded(err):
		return goneWithSession, nil
	}
	return goneDeleted, err
}

// sessionEnded reports the errors that mean the session is over.
func sessionEnded(err error) bool {
	return errors.Is(err, ErrSessionExpired) || errors.Is(err, ErrSessionClosed)
}
