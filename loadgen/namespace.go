package loadgen

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/znode"
	"github.com/zkherd/zkherd/recipes"
)

var openACL = zk.WorldACL(zk.PermAll)

// NewRunID returns a fresh run id: the UTC time and random letters, e.g.
// "20250102-150405-k3x9q2", sortable and unique enough to never collide.
func NewRunID() string {
	const letters = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 6)
	rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return time.Now().UTC().Format("20060102-150405") + "-" + string(b)
}

// validRunID accepts what NewRunID makes and other plain names.
func validRunID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return id != "." && id != ".."
}

// createNamespace creates ns (and its missing parents) with data, and its
// owner mark (owned by conn's session). The run's own node must not exist
// yet.
func createNamespace(conn *zk.Conn, ns string, data []byte) error {
	// Parents may be created concurrently by another run, or deleted by one
	// that ends (it removes empty parents): retry a few times.
	for attempt := 0; ; attempt++ {
		if err := znode.CreateParents(conn, ns, openACL); err != nil {
			return err
		}
		// The namespace and its owner mark at once: no run ever sees the
		// namespace without the mark while its owner lives.
		_, err := conn.Multi(
			&zk.CreateRequest{Path: ns, Data: data, Acl: openACL},
			&zk.CreateRequest{Path: ns + "/" + OwnerMark, Acl: openACL, Flags: zk.FlagEphemeral})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode) && attempt < 5:
			continue
		case errors.Is(err, zk.ErrNodeExists):
			return fmt.Errorf("%w: namespace %s already exists (another run with the same id?)", ErrBadOptions, ns)
		}
		return fmt.Errorf("create %s: %w", ns, err)
	}
}

// maxWalk bounds how many nodes a leftover walk looks at.
const maxWalk = 200_000

// leftovers walks the namespace below ns and returns the recipe nodes
// still there: ephemeral nodes, and nodes whose names carry a sequence
// number (queue items, lock and election nodes). Directories are not
// leftovers.
func leftovers(ctx context.Context, conn *zk.Conn, ns string) (n int64, some []string, err error) {
	queue := []string{ns}
	seen := 0
	for len(queue) > 0 && seen < maxWalk {
		if err := ctx.Err(); err != nil {
			return n, some, err
		}
		dir := queue[0]
		queue = queue[1:]
		children, _, err := conn.Children(dir)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return n, some, fmt.Errorf("list %s: %w", dir, err)
		}
		for _, c := range children {
			seen++
			p := dir + "/" + c
			if dir == ns && c == OwnerMark {
				continue // the run's own mark, held by the admin session
			}
			ok, st, err := conn.Exists(p)
			if err != nil {
				return n, some, fmt.Errorf("stat %s: %w", p, err)
			}
			if !ok {
				continue
			}
			_, recipeNode := recipes.ParseNode(c)
			if st.EphemeralOwner != 0 || (recipeNode && st.NumChildren == 0) {
				n++
				if len(some) < 10 {
					some = append(some, p)
				}
			}
			if st.NumChildren > 0 {
				queue = append(queue, p)
			}
		}
	}
	return n, some, nil
}

// removeTree deletes p and everything below it, depth first. A node that
// is already gone is fine; a node that reappears (a client still working)
// is retried a few times; a dropped connection (the ensemble still
// settling after faults) is retried for up to 60 s or until ctx ends,
// since the session outlives it.
func removeTree(ctx context.Context, conn *zk.Conn, p string) error {
	notEmpty, dropped := 0, 0
	for {
		err := removeOnce(ctx, conn, p, 0)
		switch {
		case errors.Is(err, zk.ErrNotEmpty) && notEmpty < 5:
			notEmpty++
		case errors.Is(err, zk.ErrConnectionClosed) && ctx.Err() == nil && dropped < 300:
			dropped++
			t := time.NewTimer(200 * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return err
			}
		default:
			return err
		}
	}
}

func removeOnce(ctx context.Context, conn *zk.Conn, p string, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if depth > 64 {
		return fmt.Errorf("%s is nested too deep to remove", p)
	}
	children, _, err := conn.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", p, err)
	}
	for _, c := range children {
		if err := removeOnce(ctx, conn, p+"/"+c, depth+1); err != nil {
			return err
		}
	}
	err = conn.Delete(p, -1)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete %s: %w", p, err)
	}
	return nil
}

// removeEmptyParents deletes the namespace's parents up to the root when
// no other run uses them. A parent that is not empty is left alone.
func removeEmptyParents(conn *zk.Conn, ns, chroot string) {
	for p := path.Dir(ns); p != "/" && p != chroot && p != "."; p = path.Dir(p) {
		if err := conn.Delete(p, -1); err != nil {
			return
		}
	}
}
