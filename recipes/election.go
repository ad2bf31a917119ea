package recipes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

var (
	// ErrNoLeader is returned by Leader when nobody campaigns.
	ErrNoLeader = errors.New("recipes: no leader")
	// ErrAlreadyLeader is returned by Campaign on an Election that leads.
	ErrAlreadyLeader = errors.New("recipes: already leader")
)

// Election is leader election in Curator's LeaderLatch layout: each
// candidate creates a protected EPHEMERAL_SEQUENTIAL node
// "_c_<uuid>-latch-<seq>" holding its value under the election's path; the
// lowest sequence leads, and every other candidate watches only the node
// just before its own, so a leader's departure wakes exactly one candidate.
// A Java process using Curator's LeaderLatch on the same path takes part in
// the same election (its participant id is its node's data).
//
// An Election value is one candidate; it campaigns for one term at a time.
// Safe for concurrent use.
//
// A leader cut off from the servers cannot know when they expire its
// session and elect another. By default (as with Lock) its term is given up
// once the connection has been down for the session timeout, by which time
// a successor may already lead. When two leaders must never overlap, pass
// WithLostAfterSuspended(0): Lost then closes as soon as the connection is
// in doubt, which the client notices after two thirds of the session
// timeout without a reply, before the servers can expire the session.
type Election struct {
	core lockCore
	// campaigning serialises Campaign (a 1-slot semaphore honouring ctx);
	// value is the running campaign's, written only while holding it.
	campaigning chan struct{}
	value       []byte
}

// Leader describes the current leader, as any session sees it.
type Leader struct {
	// Node is the full path of the leader's node; "" when nobody leads.
	Node string
	// Value is what the leader campaigned with.
	Value []byte
	// Session is the id of the leader's session.
	Session int64
	// Token is the creation zxid of the leader's node: it increases
	// strictly from one term to the next (a fencing token).
	Token uint64
}

// NewElection returns a candidate for the election on path (an absolute
// znode path, created on first use). WithLostAfterSuspended sets how long
// a term survives a dropped connection; WithLockData is not used (the
// value given to Campaign is the node's data). It does not talk to
// ZooKeeper.
func NewElection(s *Session, path string, opts ...LockOption) *Election {
	e := &Election{campaigning: make(chan struct{}, 1)}
	e.core.init(s, path, opts)
	e.core.acquire = e.acquire
	return e
}

// Path is the election's directory.
func (e *Election) Path() string { return e.core.path }

// Campaign joins the election with value and blocks until this candidate
// leads or ctx ends. When ctx ends first, its node is deleted before
// Campaign returns. ErrAlreadyLeader when it already leads; after a term
// ended by loss (Lost closed), Campaign starts a new one.
func (e *Election) Campaign(ctx context.Context, value []byte) error {
	select {
	case e.campaigning <- struct{}{}:
		defer func() { <-e.campaigning }()
	case <-ctx.Done():
		return ctx.Err()
	}
	if held, lost := e.term(); held {
		if !lost {
			return fmt.Errorf("recipes: campaign %s: %w", e.core.path, ErrAlreadyLeader)
		}
		// Close the lost term's books (its error only repeats the loss).
		_ = e.core.unlock(ctx)
	}
	e.value = value
	return e.core.lock(ctx, false)
}

func (e *Election) acquire(ctx context.Context, try bool, tr *tracer) (acquired, error) {
	return acquireSequential(ctx, &e.core, try, tr, PrefixLatch, e.value, func(children []string, ours string) (bool, string) {
		return waitTarget(children, ours, nil)
	})
}

// term reports whether a term is on the books, and whether it was lost.
func (e *Election) term() (held, lost bool) {
	c := &e.core
	c.mu.Lock()
	g, count := c.g, c.count
	c.mu.Unlock()
	if count == 0 {
		return false, false
	}
	select {
	case <-g.lost:
		return true, true
	default:
		return true, false
	}
}

// Resign ends the term: it deletes the leader's node and reports success
// only once the server confirms it is gone, which is when the next
// candidate may lead. If ctx ends first this candidate still leads and
// Resign may be called again (a lost reply is read back first, as
// Lock.Unlock does). ErrNotHeld when not leading; an error
// wrapping ErrLost when the term had already been lost. To withdraw from a
// campaign that has not won, cancel its ctx.
func (e *Election) Resign(ctx context.Context) error { return e.core.unlock(ctx) }

// IsLeader reports whether this candidate leads now (a term is held and not
// lost).
func (e *Election) IsLeader() bool {
	held, lost := e.term()
	return held && !lost
}

// Lost is closed when the current term ends: lost (session expired or
// closed, node deleted by someone else, connection down longer than the
// WithLostAfterSuspended policy) or resigned. Err says which.
func (e *Election) Lost() <-chan struct{} { return e.core.lostCh() }

// Err says why the last term ended: nil while leading or after Resign, an
// error wrapping ErrLost once lost.
func (e *Election) Err() error { return e.core.err() }

// FencingToken identifies the current term (0 when not leading); see
// Leader.Token.
func (e *Election) FencingToken() uint64 { return e.core.token() }

// Node is the full path of this candidate's node while it leads.
func (e *Election) Node() string { return e.core.node() }

// Leader returns the current leader, as read from ZooKeeper now: any
// session may ask, candidate or not. ErrNoLeader when nobody campaigns.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	l, _, err := e.leader(ctx, false)
	return l, err
}

// Observe returns a channel that receives the current leader at once and
// then every change of leader (a zero Leader, Node "", when nobody leads).
// It is closed, by its one goroutine, when ctx ends or the session ends
// (or a request fails otherwise, e.g. for an invalid path; the session's
// logger, WithLogger, gets the reason).
// Values are not buffered: the goroutine reads the leader again after each
// delivery, so a leader whose whole term passes while the receiver is not
// reading may be skipped, but the last state is always delivered.
func (e *Election) Observe(ctx context.Context) <-chan Leader {
	out := make(chan Leader)
	go e.observe(ctx, out)
	return out
}

func (e *Election) observe(ctx context.Context, out chan<- Leader) {
	defer close(out)
	first, last := true, ""
	for {
		l, ch, err := e.leader(ctx, true)
		if err != nil {
			e.observeFailed(ctx, err)
			return
		}
		if first || l.Node != last {
			select {
			case out <- l:
			case <-ctx.Done():
				return
			}
			first, last = false, l.Node
		}
		if _, err := waitEvent(ctx, e.core.s, ch); err != nil && !errors.Is(err, errWatchDropped) {
			e.observeFailed(ctx, err)
			return
		}
	}
}

// observeFailed logs, through the session's logger, why Observe's channel
// closes when it is not the end of ctx or of the session.
func (e *Election) observeFailed(ctx context.Context, err error) {
	if ctx.Err() == nil && e.core.s.alive() == nil {
		sessionLogger{e.core.s}.Printf("recipes: observe %s: %v", e.core.path, err)
	}
}

// leader reads the current leader. With watch, it also returns a channel
// that fires when that changes: a watch on the leader's node, or, when
// nobody leads, on the directory's children (or its creation).
func (e *Election) leader(ctx context.Context, watch bool) (Leader, <-chan zk.Event, error) {
	c := &e.core
	if c.pathErr != nil {
		return Leader{}, nil, c.pathErr
	}
	conn := c.s.Conn()
	for {
		var children []string
		err := retryConn(ctx, c.s, func() (err error) {
			children, _, err = conn.Children(c.path)
			return err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			if !watch {
				return Leader{}, nil, fmt.Errorf("recipes: election %s: %w", c.path, ErrNoLeader)
			}
			var exists bool
			var ch <-chan zk.Event
			err := retryConn(ctx, c.s, func() (err error) {
				exists, _, ch, err = conn.ExistsW(c.path)
				return err
			})
			if err != nil {
				return Leader{}, nil, fmt.Errorf("recipes: election %s: %w", c.path, err)
			}
			if exists {
				continue
			}
			return Leader{}, ch, nil
		case err != nil:
			return Leader{}, nil, fmt.Errorf("recipes: election %s: %w", c.path, err)
		}
		first := lowestCandidate(children)
		if first == "" {
			if !watch {
				return Leader{}, nil, fmt.Errorf("recipes: election %s: %w", c.path, ErrNoLeader)
			}
			var ch <-chan zk.Event
			err := retryConn(ctx, c.s, func() (err error) {
				children, _, ch, err = conn.ChildrenW(c.path)
				return err
			})
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return Leader{}, nil, fmt.Errorf("recipes: election %s: %w", c.path, err)
			}
			if lowestCandidate(children) != "" {
				continue // one arrived meanwhile; the watch fires anyway
			}
			return Leader{}, ch, nil
		}
		node := joinPath(c.path, first)
		var (
			data []byte
			stat *zk.Stat
			ch   <-chan zk.Event
		)
		err = retryConn(ctx, c.s, func() (err error) {
			if watch {
				data, stat, ch, err = conn.GetW(node)
			} else {
				data, stat, err = conn.Get(node)
			}
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			continue // the leader left between the list and the read
		}
		if err != nil {
			return Leader{}, nil, fmt.Errorf("recipes: election %s: read leader: %w", c.path, err)
		}
		return Leader{Node: node, Value: data, Session: stat.EphemeralOwner, Token: uint64(stat.Czxid)}, ch, nil
	}
}

// lowestCandidate is the recognised sequential child with the lowest
// sequence, "" if none.
func lowestCandidate(children []string) string {
	best, name := int64(-1), ""
	for _, c := range children {
		n, ok := ParseNode(c)
		if !ok || n.Seq < 0 {
			continue
		}
		if best < 0 || n.Seq < best {
			best, name = n.Seq, c
		}
	}
	return name
}
