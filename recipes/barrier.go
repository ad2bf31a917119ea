package recipes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// BarrierReady is the node a barrier's last arrival creates under the
// barrier's path to let everyone through (Curator's and ZooKeeper's name).
const BarrierReady = "ready"

// ErrNotEntered is returned by DoubleBarrier.Leave before Enter succeeded.
var ErrNotEntered = errors.New("recipes: barrier not entered")

// Barrier lets participants through once n of them have arrived (ZooKeeper's
// barrier recipe, in Curator's DistributedDoubleBarrier layout). Each
// participant creates an ephemeral node named by a fresh UUID under the
// barrier's path; the one whose arrival makes n creates BarrierReady, whose
// creation every waiter is watching. n is a threshold, not a limit: one
// arriving while BarrierReady exists passes at once. All participants must
// use the same n.
//
// Wait removes its node on the way out, and the last participant out
// removes BarrierReady, so nothing is left but the (persistent) directory.
// A path serves one round at a time: start the next round once every
// participant of the last one has returned from Wait.
type Barrier struct {
	s       *Session
	path    string
	n       int
	pathErr error
}

// NewBarrier returns a barrier for n participants on path (an absolute znode
// path, created on first use). Each participant uses its own Barrier value
// (usually its own session). It does not talk to ZooKeeper.
func NewBarrier(s *Session, path string, n int) *Barrier {
	return &Barrier{s: s, path: path, n: n, pathErr: checkBarrier(path, n)}
}

func checkBarrier(path string, n int) error {
	if err := validLockPath(path); err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("recipes: barrier %s for %d participants: want at least 1", path, n)
	}
	return nil
}

// Path is the barrier's directory.
func (b *Barrier) Path() string { return b.path }

// Wait arrives at the barrier and blocks until n participants have arrived
// or ctx ends. Either way its node is deleted before it returns (past a
// connection down for the session timeout, as soon as it is back). When ctx
// ends just as the barrier opens, Wait returns nil if the others were let
// through counting this participant, and ctx's error only if nobody was.
func (b *Barrier) Wait(ctx context.Context) error {
	if b.pathErr != nil {
		return b.pathErr
	}
	node, err := enterBarrier(ctx, b.s, b.path, b.n)
	if err != nil {
		return err
	}
	// Everyone arrived; our node no longer counts. Nobody can still be
	// waiting for BarrierReady once no participant node is left, since each
	// one deletes its own only after seeing BarrierReady. We passed, so
	// leaving is not bound by ctx (which may have ended as the barrier
	// opened): a node or BarrierReady left behind would let the next round
	// through at once (issue 21).
	discard(ctx, b.s, func(ctx context.Context) error {
		if err := deleteConfirmed(ctx, b.s, node); err != nil {
			return fmt.Errorf("recipes: barrier %s: leave: %w", b.path, err)
		}
		return removeReadyIfLast(ctx, b.s, b.path)
	})
	return nil
}

// DoubleBarrier is ZooKeeper's double barrier: Enter blocks until n
// participants have entered, Leave until all of them have left, so a group
// starts a computation together and finishes it together. Layout as
// Curator's DistributedDoubleBarrier (ephemeral UUID nodes and BarrierReady
// under the path), leaving as ZooKeeper's recipe does: the participant with
// the lowest name waits for the highest to go, every other one deletes its
// node and waits for the lowest, so each departure wakes at most one
// participant until the last. The last one out removes BarrierReady. One
// value is one participant; one round per path at a time.
type DoubleBarrier struct {
	s       *Session
	path    string
	n       int
	pathErr error

	mu      sync.Mutex // serialises Enter and Leave
	entered bool       // from Enter's success to Leave's
	node    string     // our node, "" once deleted
}

// NewDoubleBarrier returns a double barrier for n participants on path (an
// absolute znode path, created on first use). It does not talk to ZooKeeper.
func NewDoubleBarrier(s *Session, path string, n int) *DoubleBarrier {
	return &DoubleBarrier{s: s, path: path, n: n, pathErr: checkBarrier(path, n)}
}

// Path is the barrier's directory.
func (b *DoubleBarrier) Path() string { return b.path }

// Enter blocks until n participants have entered or ctx ends; when ctx ends
// first, its node is deleted before it returns. A participant that gave up
// was never counted: when ctx ends just as the barrier opens, Enter returns
// nil if the others were let through counting it (then Leave as usual),
// and ctx's error only if nobody was.
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	if b.pathErr != nil {
		return b.pathErr
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.entered {
		return fmt.Errorf("recipes: barrier %s: already entered", b.path)
	}
	node, err := enterBarrier(ctx, b.s, b.path, b.n)
	if err != nil {
		return err
	}
	b.entered, b.node = true, node
	return nil
}

// Leave blocks until every participant has left or ctx ends. When ctx ends
// first, Leave may be called again to go on waiting (its node may already
// be gone: the others see it as having left).
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.entered {
		return fmt.Errorf("recipes: barrier %s: leave: %w", b.path, ErrNotEntered)
	}
	if err := b.leave(ctx); err != nil {
		return err
	}
	b.entered = false
	// Everyone left; removing BarrierReady is not bound by ctx: left
	// behind, it would let the next round through at once.
	discard(ctx, b.s, func(ctx context.Context) error { return removeReadyIfLast(ctx, b.s, b.path) })
	return nil
}

func (b *DoubleBarrier) leave(ctx context.Context) error {
	ours := baseName(b.node)
	conn := b.s.Conn()
	for {
		children, _, err := childrenOf(ctx, b.s, b.path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("recipes: barrier %s: leave: %w", b.path, err)
		}
		members := participants(children)
		i := slices.Index(members, ours)
		if i < 0 {
			// Deleted by us on an earlier turn (or with an ended session).
			if err := b.s.alive(); err != nil {
				return err
			}
			b.node = ""
		}
		if len(members) == 0 {
			return nil
		}
		var wait string
		switch {
		case i == 0 && len(members) == 1:
			if err := deleteConfirmed(ctx, b.s, b.node); err != nil {
				return fmt.Errorf("recipes: barrier %s: leave: %w", b.path, err)
			}
			b.node = ""
			return nil
		case i == 0:
			wait = members[len(members)-1] // the lowest waits for the highest
		default:
			if b.node != "" {
				if err := deleteConfirmed(ctx, b.s, b.node); err != nil {
					return fmt.Errorf("recipes: barrier %s: leave: %w", b.path, err)
				}
				b.node = ""
			}
			wait = members[0] // the others for the lowest
		}
		var ch <-chan zk.Event
		err = retryConn(ctx, b.s, func() (err error) {
			_, _, ch, err = conn.GetW(joinPath(b.path, wait))
			return err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			return fmt.Errorf("recipes: barrier %s: leave: %w", b.path, err)
		}
		if _, err := waitEvent(ctx, b.s, ch); err != nil && !errors.Is(err, errWatchDropped) {
			return err
		}
	}
}

// participants are a barrier directory's children but BarrierReady, sorted.
func participants(children []string) []string {
	out := slices.DeleteFunc(slices.Clone(children), func(c string) bool { return c == BarrierReady })
	slices.Sort(out)
	return out
}

// enterBarrier creates our node and waits until n participants are there
// (or BarrierReady says they were). When it fails, it abandons the
// barrier (see abandonBarrier), which may find the barrier open after all:
// then it returns the node and no error, since the others went through
// counting us.
//
// Opening and abandoning are compare-and-set on the directory's data
// version: the arrival that counts n creates BarrierReady together with a
// version bump, guarded by the version of the listing that counted; one
// giving up deletes its node together with a bump, guarded by a listing
// without BarrierReady. So a participant that gave up was never counted,
// and one that was counted never gives up, even when the two race. (A
// session that ends is removed by the server without the bump; no protocol
// can undo that.)
func enterBarrier(ctx context.Context, s *Session, dir string, n int) (string, error) {
	node := joinPath(dir, uuid.NewString())
	fail := func(err error) (string, error) {
		if s.alive() == nil && abandonBarrierBounded(ctx, s, dir, node) {
			return node, nil
		}
		if errors.Is(err, ctx.Err()) || errors.Is(err, s.Err()) {
			return "", err
		}
		return "", fmt.Errorf("recipes: barrier %s: enter: %w", dir, err)
	}
	if unknown, err := createOwnEphemeral(ctx, s, node); err != nil {
		if unknown {
			// Our node may be there, and counted by an arrival that opened
			// the barrier: abandon it as a participant gives up.
			return fail(err)
		}
		return "", fmt.Errorf("recipes: barrier %s: enter: %w", dir, err)
	}
	ready := joinPath(dir, BarrierReady)
	conn := s.Conn()
	for {
		var (
			open bool
			ch   <-chan zk.Event
		)
		err := retryConn(ctx, s, func() (err error) {
			open, _, ch, err = conn.ExistsW(ready)
			return err
		})
		if err != nil {
			return fail(err)
		}
		if open {
			return node, nil
		}
		children, stat, err := childrenOf(ctx, s, dir)
		if err != nil {
			return fail(err)
		}
		if slices.Contains(children, BarrierReady) {
			return node, nil
		}
		if len(participants(children)) >= n {
			_, err := conn.Multi(
				&zk.SetDataRequest{Path: dir, Version: stat.Version},
				&zk.CreateRequest{Path: ready, Acl: openACL, Flags: zk.FlagPersistent},
			)
			switch {
			case err == nil:
				return node, nil
			case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists):
				continue // opened or abandoned since our listing: look again
			case isConnErr(err):
				if err := awaitConn(ctx, s); err != nil {
					return fail(err)
				}
				if err := syncLost(ctx, s, dir); err != nil {
					return fail(err)
				}
				continue // applied or not, the next (synced) look tells
			default:
				return fail(sessionErr(s, err))
			}
		}
		if _, err := waitEvent(ctx, s, ch); err != nil && !errors.Is(err, errWatchDropped) {
			return fail(err)
		}
	}
}

// abandonBarrierBounded abandons the barrier within a session timeout
// (ctx has usually ended already); when that is not enough, it goes on in
// the background, deleting the node in any case, so the node does not hold
// the others up until the session ends. It reports whether the barrier was
// found open, our node counted.
func abandonBarrierBounded(ctx context.Context, s *Session, dir, node string) bool {
	bounded, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Timeout())
	entered, err := abandonBarrier(bounded, s, dir, node)
	cancel()
	if err == nil || s.alive() != nil {
		return entered
	}
	go func() {
		if _, err := abandonBarrier(context.Background(), s, dir, node); err != nil {
			sessionLogger{s}.Printf("recipes: barrier %s: abandoned node not removed: %v", dir, err)
			return
		}
		// Found open: we reported failure, so leave at once.
		if err := deleteConfirmed(context.Background(), s, node); err != nil {
			sessionLogger{s}.Printf("recipes: barrier %s: abandoned node not removed: %v", dir, err)
		}
	}()
	return false
}

// abandonBarrier deletes our node unless the barrier is open. The delete
// carries a directory version bump guarded by a listing without
// BarrierReady, so an arrival that counted us before we left fails to open
// the barrier and counts again. It reports entered when BarrierReady
// exists: the node stays, we are through.
func abandonBarrier(ctx context.Context, s *Session, dir, node string) (entered bool, err error) {
	conn := s.Conn()
	// The first listing is synced: after a lost reply (our create's, a
	// multi's) the member we reconnected to may not show our node yet,
	// and taking its absence for an earlier attempt's work would leave it.
	if err := syncLost(ctx, s, dir); err != nil {
		return false, err
	}
	for {
		children, stat, err := childrenOf(ctx, s, dir)
		if errors.Is(err, zk.ErrNoNode) {
			return false, nil // the directory and our node with it are gone
		}
		if err != nil {
			return false, err
		}
		if slices.Contains(children, BarrierReady) {
			return true, nil
		}
		if !slices.Contains(children, baseName(node)) {
			return false, nil // an earlier attempt went through
		}
		_, err = conn.Multi(
			&zk.SetDataRequest{Path: dir, Version: stat.Version},
			&zk.DeleteRequest{Path: node, Version: -1},
		)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, zk.ErrBadVersion):
			continue // opened, or another left: look again
		case isConnErr(err):
			if err := awaitConn(ctx, s); err != nil {
				return false, err
			}
			if err := syncLost(ctx, s, dir); err != nil {
				return false, err
			}
		default:
			return false, sessionErr(s, err)
		}
	}
}

// removeReadyIfLast deletes BarrierReady when no participant is left.
func removeReadyIfLast(ctx context.Context, s *Session, dir string) error {
	children, _, err := childrenOf(ctx, s, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("recipes: barrier %s: %w", dir, err)
	}
	if len(participants(children)) > 0 || !slices.Contains(children, BarrierReady) {
		return nil
	}
	if err := deleteConfirmed(ctx, s, joinPath(dir, BarrierReady)); err != nil {
		return fmt.Errorf("recipes: barrier %s: %w", dir, err)
	}
	return nil
}

// createOwnEphemeral creates the ephemeral node path exactly once: after a
// connection loss it creates again, and NodeExists then means the first
// create happened if the node is this session's. NodeExists on the first
// attempt is returned as zk.ErrNodeExists (someone else has the name).
// unknown says that it failed while a create's outcome was unknown (ctx
// ended, or the session, before it could look): the node may exist, and
// the caller must remove it before it returns (issue 21: a barrier node
// counted for a participant that had given up, a claim that nobody
// wanted and nobody else could take).
func createOwnEphemeral(ctx context.Context, s *Session, path string) (unknown bool, err error) {
	conn := s.Conn()
	madeDir := false
	for {
		if err := s.alive(); err != nil {
			return false, err
		}
		_, err := conn.Create(path, nil, zk.FlagEphemeral, openACL)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, zk.ErrNoNode) && !madeDir:
			// (After a lost reply too: the directory is missing, so our
			// node is.)
			madeDir, unknown = true, false
			if err := ensurePath(ctx, s, path[:len(path)-len(baseName(path))-1]); err != nil {
				return false, err
			}
		case errors.Is(err, zk.ErrNodeExists) && unknown:
			// After a lost reply the node may be ours; the read that says
			// so is synced (syncLost), or a lagging member could deny it
			// and leave it an orphan until the session ends.
			if err := syncLost(ctx, s, path); err != nil {
				return s.alive() == nil, err
			}
			owner, err := ownerOfNode(ctx, s, path)
			switch {
			case err != nil:
				return s.alive() == nil, err
			case owner == s.ID():
				return false, nil
			}
			return false, fmt.Errorf("recipes: create %s: %w", path, zk.ErrNodeExists)
		case errors.Is(err, zk.ErrNodeExists):
			return false, fmt.Errorf("recipes: create %s: %w", path, err)
		case isConnErr(err):
			unknown = true
			if err := awaitConn(ctx, s); err != nil {
				return s.alive() == nil, err
			}
		default:
			return unknown && s.alive() == nil, sessionErr(s, err)
		}
	}
}

// ownerOfNode is path's ephemeral owner; 0 when absent or persistent.
func ownerOfNode(ctx context.Context, s *Session, path string) (int64, error) {
	var stat *zk.Stat
	err := retryConn(ctx, s, func() (err error) {
		_, stat, err = s.Conn().Exists(path)
		return err
	})
	if err != nil || stat == nil {
		return 0, err
	}
	return stat.EphemeralOwner, nil
}
