package distrib

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
)

// The requests of a run's end (publishing a part, collecting the parts,
// marking the run finished) outlive a lost connection. At the end of a
// large run the servers, closing thousands of sessions, may serve no
// connection for tens of seconds (docs/SCALE.md, 50,000 sessions): a
// process that gave up at its first lost connection lost its part, and
// the run its merged report. Each such request is retried until its ctx
// ends: over the same session while it lives, over a new one (this
// process's ephemeral nodes made again) once it expired, when the member
// was given a way to open one (ReopenWith).

// Reopen opens a new coordination session, to the same servers as the
// first.
type Reopen func(ctx context.Context) (*recipes.Session, error)

// ReopenWith lets the member replace its coordination session when it
// expires: its ephemeral nodes (its member node, the starter's owner
// mark) are made again in the new session, which the member then owns
// (Finish and Leave close it).
func (m *Member) ReopenWith(open Reopen) { m.open = open }

// sess is the coordination session of the moment.
func (m *Member) sess() *recipes.Session { return m.s.Load() }

// retryPause is the pause between two attempts of a request that lost its
// connection: the servers that dropped it are often busy.
const retryPause = 500 * time.Millisecond

// retry runs op on the coordination session's connection until it
// returns something other than a lost connection or an ended session, or
// ctx ends. op must be safe to repeat: a write whose reply was lost may
// have been applied, and op must find out (see Publish).
func (m *Member) retry(ctx context.Context, op func(conn *zk.Conn) error) error {
	for {
		s := m.sess()
		err := op(s.Conn())
		if err == nil || !(recipes.IsConnectionLoss(err) || errors.Is(err, zk.ErrSessionExpired) || s.Err() != nil) {
			return err
		}
		if werr := m.reconnect(ctx, s); werr != nil {
			return fmt.Errorf("%w (the coordination's connection was lost: %v)", werr, err)
		}
	}
}

// reconnect waits until session s (which just lost its connection) is
// connected again, or replaces it with a new session once it ended.
func (m *Member) reconnect(ctx context.Context, s *recipes.Session) error {
	t := time.NewTimer(retryPause)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
	if m.sess() != s { // replaced meanwhile
		return nil
	}
	err := s.WaitConnected(ctx)
	if err == nil || ctx.Err() != nil {
		return err
	}
	// The session ended (expired, or closed under us).
	if m.open == nil {
		return fmt.Errorf("coordination session: %w", err)
	}
	for {
		fresh, oerr := m.open(ctx)
		if oerr == nil {
			m.reattach(ctx, fresh)
			old := m.s.Swap(fresh)
			if m.ownS {
				old.Close()
			}
			m.ownS = true
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (open a new coordination session: %v)", ctx.Err(), oerr)
		}
		t := time.NewTimer(retryPause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// reattach makes this process's ephemeral nodes again in session s, the
// old session's having gone with it: its member node (so the starter does
// not take it for dead) and, for the starter, the run's owner mark (so a
// later run does not take the run for abandoned). Best effort: a node
// that cannot be made again only makes the process look gone sooner.
func (m *Member) reattach(ctx context.Context, s *recipes.Session) {
	acl := zk.WorldACL(zk.PermAll)
	if m.index == 0 {
		m.createEphemeral(ctx, s, m.root+"/"+loadgen.OwnerMark, nil, acl)
	}
	if m.node != "" {
		m.createEphemeral(ctx, s, m.node, ownInfo(m.index), acl)
	}
}

func (m *Member) createEphemeral(ctx context.Context, s *recipes.Session, node string, data []byte, acl []zk.ACL) {
	for ctx.Err() == nil {
		_, err := s.Conn().Create(node, data, zk.FlagEphemeral, acl)
		if !recipes.IsConnectionLoss(err) || s.WaitConnected(ctx) != nil {
			return // made, there already (a lost reply), or the run is gone
		}
	}
}
