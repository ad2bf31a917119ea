package loadgen

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/pkgerr"
	"github.com/zkherd/zkherd/internal/znode"
)

// Runs that share a namespace: several load generator processes drive the
// same locks (package distrib coordinates them). Each process's runner
// then neither creates nor removes the namespace, counts as leftovers only
// the nodes its own sessions still own, and writes its fencing tokens to a
// guarded znode next to each lock, so that fencing spans the processes.

// namespace is the run's namespace: Options.Namespace, or Root/RunID.
func (r *runner) namespace() string {
	if r.opts.Namespace != "" {
		return r.opts.Chroot + r.opts.Namespace
	}
	return r.opts.Chroot + Root + "/" + r.opts.RunID
}

// checkShared rejects what a shared namespace cannot run.
func (r *runner) checkShared() error {
	if !r.opts.SharedNamespace {
		return nil
	}
	switch {
	case r.opts.Namespace == "":
		return fmt.Errorf("%w: a shared namespace needs Options.Namespace", ErrBadOptions)
	}
	return nil
}

// makeNamespace creates the run's namespace; a shared one may exist
// already (another process created it).
func (r *runner) makeNamespace(conn *zk.Conn, info []byte) error {
	if !r.opts.SharedNamespace {
		return createNamespace(conn, r.ns, info)
	}
	return znode.CreatePath(conn, r.ns, openACL)
}

// checkOwnLeftovers is checkLeftovers for a shared namespace: only nodes
// owned by this run's sessions count, since other processes' clients may
// still be working.
func (r *runner) checkOwnLeftovers(ctx context.Context, conn *zk.Conn) leftoverCheck {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	own := map[int64]bool{}
	for _, c := range r.clients {
		if s := c.session(); s != nil {
			own[s.ID()] = true
		}
	}
	_, some, err := leftoverOwners(ctx, conn, r.ns, own)
	if err != nil {
		return notLookedAt(err)
	}
	out := leftoverCheck{n: int64(len(some)), paths: some}
	if len(some) > 0 {
		out.violation = fmt.Sprintf("leftover znodes: %d node(s) of this process's sessions left in %s after every client finished, e.g. %s", len(some), r.ns, some[0])
	}
	return out
}

// leftoverOwners lists the ephemeral nodes below ns owned by the sessions
// in own.
func leftoverOwners(ctx context.Context, conn *zk.Conn, ns string, own map[int64]bool) (n int64, paths []string, err error) {
	queue := []string{ns}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return 0, paths, err
		}
		dir := queue[0]
		queue = queue[1:]
		children, _, err := conn.Children(dir)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return 0, paths, fmt.Errorf("list %s: %w", dir, err)
		}
		for _, c := range children {
			p := dir + "/" + c
			ok, st, err := conn.Exists(p)
			if err != nil {
				return 0, paths, fmt.Errorf("stat %s: %w", p, err)
			}
			if !ok {
				continue
			}
			if st.EphemeralOwner != 0 && own[st.EphemeralOwner] {
				paths = append(paths, p)
			}
			if st.NumChildren > 0 {
				queue = append(queue, p)
			}
		}
	}
	return int64(len(paths)), paths, nil
}

// fitSharedListings grows the clients' receive buffers in a shared
// namespace so that a listing of every process's nodes fits: a reply
// larger than the buffer would cut the connection, again and again.
func (r *runner) fitSharedListings() {
	n := r.opts.NamespaceClients
	if r.listerBuffer() > 0 {
		return // the listings go through the Lister, sized by listerBuffer
	}
	if !r.opts.SharedNamespace || n <= r.run.Clients || r.run.Clients <= 0 {
		return
	}
	r.params.recvBuf = max(r.params.recvBuf, r.work.recvBuffer()*((n+r.run.Clients-1)/r.run.Clients))
}

// Leftovers counts the recipe nodes left below ns (ephemeral nodes, and
// sequence-named nodes without children) and names up to ten of them: the
// check a run makes on its namespace, for a process that merges runs.
func Leftovers(ctx context.Context, conn *zk.Conn, ns string) (n int64, some []string, err error) {
	n, some, err = leftovers(ctx, conn, ns)
	return n, some, pkgerr.Wrap("loadgen", err)
}

// RemoveTree deletes p and everything below it.
func RemoveTree(ctx context.Context, conn *zk.Conn, p string) error {
	return pkgerr.Wrap("loadgen", removeTree(ctx, conn, p))
}

// znodeFence is a guarded resource kept in a znode, shared by processes:
// it holds the highest fencing token written, and a write replaces it with
// a version check, so two processes cannot both move it.
type znodeFence struct {
	conn *zk.Conn
	path string
}

// fencePath is the guarded znode of a lock: a sibling of its directory
// (a child would be taken for a contender).
func fencePath(lock string) string {
	return path.Dir(lock) + "/fence-" + strings.TrimPrefix(path.Base(lock), "lock-")
}

// write writes token unless the znode holds a higher one; highest is the
// znode's token after the write.
func (z znodeFence) write(token uint64) (accepted bool, highest uint64, err error) {
	for attempt := 0; attempt < 100; attempt++ {
		data, st, err := z.conn.Get(z.path)
		if errors.Is(err, zk.ErrNoNode) {
			_, err := z.conn.Create(z.path, []byte(strconv.FormatUint(token, 10)), 0, openACL)
			if err == nil {
				return true, token, nil
			}
			if errors.Is(err, zk.ErrNodeExists) {
				continue
			}
			return false, 0, err
		}
		if err != nil {
			return false, 0, err
		}
		cur, _ := strconv.ParseUint(string(data), 10, 64)
		switch {
		case token < cur:
			return false, cur, nil
		case token == cur:
			return true, cur, nil
		}
		_, err = z.conn.Set(z.path, []byte(strconv.FormatUint(token, 10)), st.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return false, 0, err
		}
		return true, token, nil
	}
	return false, 0, fmt.Errorf("fence %s: too much contention", z.path)
}
