package recipes

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
// connection and look again.
func isConnErr(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrSessionMoved)
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
// session's end, or ctx's error.
func awaitConn(ctx context.Context, s *Session) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.WaitConnected(ctx)
}

// retryConn runs op until it returns something other than a connection
// error, waiting for the connection between attempts. Only for requests that
// are safe to repeat (reads, idempotent writes).
func retryConn(ctx context.Context, s *Session, op func() error) error {
	for {
		err := op()
		if err == nil || !isConnErr(err) {
			return sessionErr(s, err)
		}
		if werr := awaitConn(ctx, s); werr != nil {
			return werr
		}
	}
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
// name, so one call never leaves two nodes.
func createProtected(ctx context.Context, s *Session, dir, kind string, data []byte, mode int32) (string, error) {
	prefix := newProtectedPrefix(kind)
	return createWithPrefix(ctx, s, dir, prefix, data, mode)
}

func createWithPrefix(ctx context.Context, s *Session, dir, prefix string, data []byte, mode int32) (string, error) {
	conn := s.Conn()
	madeDir := false
	for {
		if err := s.alive(); err != nil {
			return "", err
		}
		path, err := conn.Create(joinPath(dir, prefix), data, mode, openACL)
		switch {
		case err == nil:
			return path, nil
		case errors.Is(err, zk.ErrNoNode) && !madeDir:
			madeDir = true
			if err := ensurePath(ctx, s, dir); err != nil {
				return "", err
			}
		case isConnErr(err):
			if err := awaitConn(ctx, s); err != nil {
				return "", err
			}
			found, err := findProtected(ctx, s, dir, prefix, mode&zk.FlagEphemeral != 0)
			if err != nil {
				return "", err
			}
			if found != "" {
				return found, nil
			}
		default:
			return "", fmt.Errorf("recipes: create in %s: %w", dir, sessionErr(s, err))
		}
	}
}

// findProtected lists dir for a child starting with prefix (the protected
// name of one attempt). For an ephemeral node it checks that this session
// owns it. "" means certainly not there.
func findProtected(ctx context.Context, s *Session, dir, prefix string, ephemeral bool) (string, error) {
	var children []string
	err := retryConn(ctx, s, func() (err error) {
		children, _, err = s.Conn().Children(dir)
		return err
	})
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
			exists, stat, err = s.Conn().Exists(path)
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
			return "", fmt.Errorf("recipes: own node %s deleted by another client: %w", path, ErrLost)
		}
		if owner := s.ID(); stat.EphemeralOwner != owner {
			return "", fmt.Errorf("recipes: node %s owned by session 0x%x, not ours (0x%x): %w",
				path, stat.EphemeralOwner, owner, ErrSessionExpired)
		}
		return path, nil
	}
	return "", nil
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

// listChildren returns dir's children parsed and sorted by sequence, and the
// names no layout recognises. Connection losses are retried.
func listChildren(ctx context.Context, s *Session, dir string) ([]Node, []string, error) {
	var children []string
	err := retryConn(ctx, s, func() (err error) {
		children, _, err = s.Conn().Children(dir)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("recipes: list %s: %w", dir, err)
	}
	nodes, unknown := ParseChildren(children)
	return nodes, unknown, nil
}

// indexOf returns the index of the node named name in nodes, or -1.
func indexOf(nodes []Node, name string) int {
	for i := range nodes {
		if nodes[i].Name == name {
			return i
		}
	}
	return -1
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
