package recipes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// The create and delete that every recipe shares. A create whose reply is
// lost to a connection drop may or may not have happened on the server; the
// protected name (Curator's "_c_<uuid>-" prefix) lets us find out by listing
// the directory instead of guessing, so one attempt never leaves two nodes.

// openACL is the ACL every recipe node gets (Curator's default too).
var openACL = zk.WorldACL(zk.PermAll)

// isConnErr reports errors after which a request's outcome is unknown or the
// request was never sent, and the session may still be alive: wait for the
// connection and look again. It is the one place that classifies them.
//
// Besides its own values, go-zookeeper v1.0.4 hands a request the raw
// error of its socket write (conn.sendData): "write: broken pipe" or
// "connection reset by peer" when the server closed the connection while
// this client was not reading (paused, or its reads slow), an i/o timeout
// past the write deadline, "use of closed network connection" after a
// concurrent drop. It closes the connection then, as after any other
// loss, so each is a lost connection, never an answer from the server.
func isConnErr(err error) bool {
	if err == nil {
		return false
	}
	var opErr *net.OpError // (not net.Error: ctx's DeadlineExceeded is one)
	return errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrSessionMoved) ||
		errors.As(err, &opErr) ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// sessionErr turns a go-zookeeper error into ours when it means the session
// ended, so callers can test errors.Is(err, ErrSessionExpired).
func sessionErr(s *Session, err error) error {
	if errors.Is(err, zk.ErrSessionExpired) {
		return ErrSessionExpired
	}
	if e := s.alive(); e != nil && isConnErr(err) {
		return e
	}
	return err
}

// awaitConn waits after a connection error: nil when connected again, the
// session's end, or ctx's error. go-zookeeper may report the error a
// moment before the state change, so a session still "connected" is given
// up to drainGrace to notice, which keeps retry loops from spinning.
func awaitConn(ctx context.Context, s *Session) error {
	if err := s.alive(); err != nil {
		return err
	}
	if ch, st := s.Changed(); st == StateConnected {
		t := time.NewTimer(drainGrace)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	return s.WaitConnected(ctx)
}

// IsConnectionLoss reports whether err leaves a request's outcome unknown
// (or the request unsent) because the connection was lost, the session
// perhaps still alive: the caller may wait for the connection and look
// again. For callers outside this package that retry their own requests.
func IsConnectionLoss(err error) bool { return isConnErr(err) }

// drainGrace bounds awaitConn's wait for go-zookeeper to notice a drop.
const drainGrace = 50 * time.Millisecond

// retryConn runs op until it returns something other than a connection
// error, waiting for the connection between attempts. Only for requests that
// are safe to repeat (reads, idempotent writes).
func retryConn(ctx context.Context, s *Session, op func() error) error {
	for {
		tooLarge := s.tooLarge.Load()
		err := op()
		if err == nil || !isConnErr(err) {
			return sessionErr(s, err)
		}
		if err := s.replyTooLargeSince(tooLarge); err != nil {
			return err
		}
		if werr := awaitConn(ctx, s); werr != nil {
			return werr
		}
	}
}

// replyTooLargeSince returns ErrReplyTooLarge, explained, when go-zookeeper
// refused a reply for the receive buffer since the count was n (it then
// drops the connection, and repeating the request would loop).
func (s *Session) replyTooLargeSince(n int64) error {
	if s.tooLarge.Load() == n {
		return nil
	}
	msg, _ := s.tooLargeMsg.Load().(string)
	return fmt.Errorf("%w (%s): give the session a larger one with WithBufferSizes", ErrReplyTooLarge, msg)
}

// newProtectedPrefix returns a fresh "_c_<uuid>-<kind>" node name prefix.
func newProtectedPrefix(kind string) string {
	return ProtectedPrefix + uuid.NewString() + "-" + kind
}

// createProtected creates a node named "_c_<uuid>-<kind>" (plus the server's
// 10-digit sequence when mode has zk.FlagSequence) under dir and returns its
// full path. kind is one of the Prefix* constants (PrefixLock, PrefixRead...).
//
// Missing parents of dir are created (persistent). After a connection loss
// it waits for the connection, lists dir and looks for its own node by the
// uuid; an ephemeral node found there must be owned by this session. Only
// when the node is certainly absent does it create again, with the same
// name, so one call never leaves two nodes; a persistent node, which
// another client may have consumed meanwhile, is never created again: its
// absence leaves the outcome unknown. When it gives up while the
// outcome is unknown (ctx ended during that recovery), it removes the node
// if it turns out to exist, in the background if need be (see discard).
func createProtected(ctx context.Context, s *Session, dir, kind string, data []byte, mode int32) (string, error) {
	return createWithPrefix(ctx, s, dir, newProtectedPrefix(kind), data, mode, openACL, nil)
}

func createWithPrefix(ctx context.Context, s *Session, dir, prefix string, data []byte, mode int32, acl []zk.ACL, tr *tracer) (string, error) {
	node, err := createWithPrefixOnce(ctx, s, dir, prefix, data, mode, acl, tr)
	if err != nil || mode&zk.FlagSequence == 0 {
		return node, err
	}
	if _, err := ownSequence(joinPath(dir, prefix), node); err != nil {
		// Refused rather than misordered; the node must not stay.
		removed := discard(ctx, s, func(ctx context.Context) error { return deleteConfirmed(ctx, s, node) })
		if !removed && mode&zk.FlagEphemeral == 0 {
			return "", fmt.Errorf("%w: node %s may stay (removing it did not finish): %w", ErrOutcomeUnknown, node, err)
		}
		return "", err
	}
	return node, nil
}

func createWithPrefixOnce(ctx context.Context, s *Session, dir, prefix string, data []byte, mode int32, acl []zk.ACL, tr *tracer) (string, error) {
	conn := s.Conn()
	ephemeral := mode&zk.FlagEphemeral != 0
	madeDir := false
	for {
		if err := s.alive(); err != nil {
			return "", err
		}
		start := time.Now()
		path, err := conn.Create(joinPath(dir, prefix), data, mode, acl)
		tr.request(OpCreate, start, err)
		switch {
		case err == nil:
			return path, nil
		case errors.Is(err, zk.ErrNoNode) && !madeDir:
			madeDir = true
			if err := ensurePath(ctx, s, dir); err != nil {
				return "", err
			}
		case isConnErr(err):
			found, err := recoverProtected(ctx, s, dir, prefix, ephemeral, tr)
			if err != nil {
				// An ephemeral node goes with an ended session.
				removed := ephemeral && s.alive() != nil
				if s.alive() == nil && !errors.Is(err, ErrLost) {
					removed = discard(ctx, s, func(ctx context.Context) error {
						found, err := findProtected(ctx, s, dir, prefix, ephemeral, nil)
						if err != nil || found == "" {
							return err
						}
						return deleteConfirmed(ctx, s, found)
					})
				}
				if !removed && !ephemeral {
					// A persistent node (a queue item) may stay: the caller
					// must not take the create for undone (issue 21).
					return "", fmt.Errorf("%w: create in %s (the node may be there; removing it did not finish): %w",
						ErrOutcomeUnknown, dir, err)
				}
				return "", err
			}
			if found != "" {
				return found, nil
			}
			if !ephemeral {
				// Absent is no proof for a persistent node: the create may
				// have been carried out and its node consumed since (a
				// queue item taken before the producer reconnected).
				// Creating again queued the item twice (queue-adversary).
				// An ephemeral node is consumed by nobody else, so its
				// absence while the session lives means not created.
				return "", fmt.Errorf("%w: create in %s: its reply was lost and its node is not there: it may have been created and taken already (not created again)",
					ErrOutcomeUnknown, dir)
			}
		default:
			return "", fmt.Errorf("recipes: create in %s: %w", dir, sessionErr(s, err))
		}
	}
}

// recoverProtected waits for the connection after a create's outcome was
// lost, then looks for the node by its protected prefix.
func recoverProtected(ctx context.Context, s *Session, dir, prefix string, ephemeral bool, tr *tracer) (string, error) {
	if err := awaitConn(ctx, s); err != nil {
		return "", err
	}
	// A listing that missed our node would make us create a second one, an
	// orphan that blocks every later contender.
	if err := syncLost(ctx, s, dir); err != nil {
		return "", err
	}
	return findProtected(ctx, s, dir, prefix, ephemeral, tr)
}

// syncLost makes the member the session is connected to catch up with the
// leader on path, before reading back the outcome of a write whose reply
// was lost. The session's last seen zxid predates that write, so the
// member it reconnected to may not have applied it yet (ZooKeeper serves
// reads from the member a client is connected to, which may lag); what a
// read there says about the write could be stale. A write that is retried
// needs none: writes go through the leader.
func syncLost(ctx context.Context, s *Session, path string) error {
	err := retryConn(ctx, s, func() error {
		_, err := s.Conn().Sync(path)
		return err
	})
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("recipes: sync %s: %w", path, err)
	}
	return nil
}

// findProtected lists dir for a child starting with prefix (the protected
// name of one attempt). For an ephemeral node it checks that this session
// owns it. "" means certainly not there.
func findProtected(ctx context.Context, s *Session, dir, prefix string, ephemeral bool, tr *tracer) (string, error) {
	children, err := listSynced(ctx, s, dir, tr)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("recipes: list %s: %w", dir, err)
	}
	for _, c := range children {
		if !strings.HasPrefix(c, prefix) {
			continue
		}
		path := joinPath(dir, c)
		if !ephemeral {
			return path, nil
		}
		var stat *zk.Stat
		var exists bool
		err := retryConn(ctx, s, func() (err error) {
			start := time.Now()
			exists, stat, err = s.Conn().Exists(path)
			tr.request(OpExists, start, err)
			return err
		})
		if err != nil {
			return "", fmt.Errorf("recipes: stat %s: %w", path, err)
		}
		if !exists {
			// Gone between the list and the stat: only an expiry or another
			// client removes our ephemeral node.
			if err := s.alive(); err != nil {
				return "", err
			}
			return "", fmt.Errorf("%w: own node %s deleted by another client", ErrLost, path)
		}
		if owner := s.ID(); stat.EphemeralOwner != owner {
			return "", fmt.Errorf("recipes: node %s owned by session 0x%x, not ours (0x%x): %w",
				path, stat.EphemeralOwner, owner, ErrSessionExpired)
		}
		return path, nil
	}
	return "", nil
}

// discard removes a node an abandoned operation may have left (del deletes
// it, returning nil once it is certainly gone). The caller's ctx has usually
// ended, so del runs without its cancellation: at once when connected; when
// the connection is down, for up to the session timeout; past that, in a
// goroutine that ends when the node is confirmed gone or the session ends
// (which removes an ephemeral node anyway). Callers thus return promptly
// with no orphan left behind while the session lives on.
// removed says whether del confirmed it before discard returned.
func discard(ctx context.Context, s *Session, del func(context.Context) error) (removed bool) {
	bounded, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Timeout())
	err := del(bounded)
	cancel()
	if err != nil && s.alive() == nil {
		go func() {
			if err := del(context.Background()); err != nil {
				sessionLogger{s}.Printf("recipes: abandoned node not removed: %v", err)
			}
		}()
	}
	return err == nil
}

// ensurePath creates path and its missing parents as persistent nodes.
// NodeExists is success; connection losses are retried.
func ensurePath(ctx context.Context, s *Session, path string) error {
	if path == "/" || path == "" {
		return nil
	}
	// One create per level, from the root down; this runs only after a
	// create failed with NoNode, so once per directory.
	for i := 1; i <= len(path); i++ {
		if i != len(path) && path[i] != '/' {
			continue
		}
		p := path[:i]
		err := retryConn(ctx, s, func() error {
			_, err := s.Conn().Create(p, nil, zk.FlagPersistent, openACL)
			return err
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("recipes: create %s: %w", p, err)
		}
	}
	return nil
}

// deleteConfirmed deletes path, retrying across connection losses until the
// server confirms the node is gone (deleted now, or already absent). It
// returns the session's end when the session expires first, and ctx's error
// when ctx ends first: in both of those cases the node may still exist
// (persistent) or will vanish with the session (ephemeral).
func deleteConfirmed(ctx context.Context, s *Session, path string) error {
	err := retryConn(ctx, s, func() error {
		return s.Conn().Delete(path, -1)
	})
	if err == nil || errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return fmt.Errorf("recipes: delete %s: %w", path, err)
}

// deleteAt deletes node at version (-1: any); asHolder writes the release
// mark in the same transaction (see Lock.acquire).
func deleteAt(s *Session, node string, asHolder bool, version int32) error {
	if asHolder {
		_, err := s.Conn().Multi(
			&zk.SetDataRequest{Path: node, Data: releasedMark, Version: version},
			&zk.DeleteRequest{Path: node, Version: -1},
		)
		return err
	}
	return s.Conn().Delete(node, version)
}

// deleteIfOwned deletes node if, read after a sync (see syncLost), it is
// this session's ephemeral, created at czxid (any, when 0), at the version
// read: never a node another session, or another grant of ours, created
// under the same name. It returns nil once no such node is there, and
// deleted when one of its deletes was (or may have been, its reply lost)
// carried out. One window stays: a node deleted and created again under
// the same name, at the same version, between the read and the delete
// (one round trip); ZooKeeper has no delete conditional on a czxid.
//
// Once a delete's reply was lost it goes on past ctx's end, for up to the
// session timeout, so that the caller learns what its delete did; an error
// after that wraps ErrOutcomeUnknown.
func deleteIfOwned(ctx context.Context, s *Session, node string, czxid int64, asHolder bool, tr *tracer) (deleted bool, err error) {
	for {
		if err := syncLost(ctx, s, node); err != nil {
			return deleted, err
		}
		var (
			exists bool
			stat   *zk.Stat
		)
		err := retryConn(ctx, s, func() (err error) {
			exists, stat, err = s.Conn().Exists(node)
			return err
		})
		if err != nil {
			return deleted, err
		}
		if !exists || stat.EphemeralOwner != s.ID() || (czxid != 0 && stat.Czxid != czxid) {
			// Gone: deleted by us (a lost reply's delete), by another
			// client, or with the session. A Session refuses to dial
			// once expired, but a read answered on its last connection
			// may come after the expiry: only a live session's answer
			// says ours is gone without it.
			return deleted, s.alive()
		}
		// Version-checked: if ours was deleted and another created since,
		// or someone wrote to ours, look again.
		start := time.Now()
		err = deleteAt(s, node, asHolder, stat.Version)
		tr.request(OpDelete, start, err)
		err = sessionErr(s, err)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		case isConnErr(err):
			if !deleted {
				deleted = true
				var cancel context.CancelFunc
				ctx, cancel = pastCtx(ctx, s)
				defer cancel()
			}
			if werr := awaitConn(ctx, s); werr != nil {
				return deleted, fmt.Errorf("%w: delete of %s: %w", ErrOutcomeUnknown, node, werr)
			}
		default:
			return deleted, err
		}
	}
}

// pastCtx is the context of a read-back after a write whose reply was
// lost: not ended by ctx, since the caller must learn what its write did,
// but bounded by the session timeout (past it, the session has likely
// expired on the servers).
func pastCtx(ctx context.Context, s *Session) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.Timeout())
}

// deleteOwnedKnown deletes path, an ephemeral node of this session whose
// name another session may take once it is gone (a claim), and returns nil
// once it is certainly gone. An error before any delete reached the
// server means the node is still there; once a delete's reply was lost it
// reads the outcome back past ctx (see deleteIfOwned), and an error then
// wraps ErrOutcomeUnknown. Retrying a delete by name instead could remove
// another session's node.
func deleteOwnedKnown(ctx context.Context, s *Session, path string) error {
	err := s.Conn().Delete(path, -1)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		// Gone: deleted by another client, or with the session (a reply
		// from the session's last connection can follow its expiry):
		// only a live session's answer means ours is gone without it.
		return s.alive()
	case isConnErr(err):
		bounded, cancel := pastCtx(ctx, s)
		defer cancel()
		if _, err := deleteIfOwned(bounded, s, path, 0, false, nil); err != nil {
			if errors.Is(err, ErrOutcomeUnknown) {
				return err
			}
			return fmt.Errorf("%w: delete of %s: %w", ErrOutcomeUnknown, path, err)
		}
		return nil
	}
	return fmt.Errorf("recipes: delete %s: %w", path, sessionErr(s, err))
}

// existsAfterLostReply says whether path exists, read after a write on it
// whose reply was lost: it waits for the connection, syncs (see syncLost)
// and reads, for up to the session timeout even when ctx has ended, since
// the caller must learn what its write did before it returns. An error
// means the outcome stays unknown.
func existsAfterLostReply(ctx context.Context, s *Session, path string) (bool, error) {
	bounded, cancel := pastCtx(ctx, s)
	defer cancel()
	if err := awaitConn(bounded, s); err != nil {
		return false, err
	}
	if err := syncLost(bounded, s, path); err != nil {
		return false, err
	}
	var exists bool
	err := retryConn(bounded, s, func() (err error) {
		exists, _, err = s.Conn().Exists(path)
		return err
	})
	return exists, err
}

// childrenOf lists dir's children with dir's stat, retrying connection
// losses.
func childrenOf(ctx context.Context, s *Session, dir string) (children []string, stat *zk.Stat, err error) {
	err = retryConn(ctx, s, func() (err error) {
		children, stat, err = s.Conn().Children(dir)
		return err
	})
	return children, stat, err
}

// joinPath joins a directory and a child name.
func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// baseName is the last path component.
func baseName(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}

// validLockPath checks the path a recipe is given.
func validLockPath(path string) error {
	if path == "" || path[0] != '/' || (len(path) > 1 && path[len(path)-1] == '/') || strings.Contains(path, "//") {
		return fmt.Errorf("recipes: invalid path %q: want an absolute path like /locks/name", path)
	}
	return nil
}
