package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// OwnerMark is the ephemeral node a run keeps in its namespace
// (Root/<id>/owner) for as long as it runs: its admin session owns it, so
// it goes with the process that ran the run, however that ends (exit,
// crash, SIGKILL, a lost machine: once the session expires). A namespace
// under Root without one belongs to a run that is gone, and RemoveDeadRuns
// removes it. (A zkherd from before owner marks made none: its runs'
// namespaces count as dead unless its process lives on this host.)
const OwnerMark = "owner"

// RemoveDeadRuns removes the namespaces under chroot+Root of runs whose
// owners are gone (no OwnerMark) and returns their ids. Spared: a
// namespace with its mark, one younger than a minute, and one whose
// recorded process still lives on this host. A run that died holds its
// mark until its session expires on the servers (its session timeout).
func RemoveDeadRuns(ctx context.Context, conn *zk.Conn, chroot string) (removed []string, err error) {
	defer func() { err = pkgerr.Wrap("loadgen", err) }()
	root := chroot + Root
	ids, _, err := conn.Children(root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	var errs []error
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		ns := root + "/" + id
		dead, err := deadRun(conn, ns)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !dead {
			continue
		}
		if err := removeTree(ctx, conn, ns); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", ns, err))
			continue
		}
		removed = append(removed, id)
	}
	return removed, errors.Join(errs...)
}

// deadRun reports whether the run of namespace ns is gone.
func deadRun(conn *zk.Conn, ns string) (bool, error) {
	marked, _, err := conn.Exists(ns + "/" + OwnerMark)
	if err != nil {
		return false, fmt.Errorf("stat %s/%s: %w", ns, OwnerMark, err)
	}
	if marked {
		return false, nil
	}
	data, _, err := conn.Get(ns)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", ns, err)
	}
	var owner struct {
		PID  int    `json:"pid"`
		Host string `json:"host"`
	}
	if json.Unmarshal(data, &owner) == nil && owner.Host == hostname() && processAlive(owner.PID) {
		return false, nil
	}
	return true, nil
}

// processAlive reports whether a process with this id exists here.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
