package inspect

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/recipes"
)

// Recipe layouts that span more than one directory, or whose nodes alone
// do not say what they are (docs/INSPECTOR-LAYOUTS.md lists them all,
// each with the client that produced it in TestForeignRecipes):
//
//   - kazoo Semaphore(P): leases are ephemerals named by a bare uuid4 hex
//     (no sequence) under P, whose data is the lease limit; contenders
//     queue in a kazoo Lock at the sibling "P-__lock__" while they wait
//     for a lease. The first of that lock is not a holder of anything: it
//     is the contender blocked waiting for a lease.
//   - Curator InterProcessSemaphoreV2(P): leases under P/leases, the
//     waiting contenders in an InterProcessMutex at P/locks; the same
//     holds for the first of P/locks.
//   - kazoo LockingQueue(P): items under P/entries; an item taken by a
//     consumer and not yet consumed has an ephemeral of the same name
//     under P/taken, owned by the consumer.
//   - A kazoo Lock and a kazoo Election, and a Curator InterProcessMutex
//     and a LeaderSelector, write the same nodes: a directory of them is
//     a "lock or election".

// kazooSemaphoreLock is the suffix of a kazoo Semaphore's lock directory.
const kazooSemaphoreLock = "-__lock__"

// waitingRoom reports whether dir is the lock where a semaphore's
// contenders wait for a lease, and whose semaphore: kazoo's "P-__lock__",
// Curator's "P/locks" beside "P/leases" (leases tells whether it exists).
func waitingRoom(dir string, leasesExist func(string) bool) (semaphore string, ok bool) {
	if strings.HasSuffix(dir, kazooSemaphoreLock) {
		return strings.TrimSuffix(dir, kazooSemaphoreLock), true
	}
	if path.Base(dir) == "locks" && leasesExist(path.Join(path.Dir(dir), "leases")) {
		return path.Dir(dir), true
	}
	return "", false
}

// kazooLeases reports whether names are all kazoo semaphore lease names (a
// uuid4 in 32 hex digits).
func kazooLeases(names []string) bool {
	for _, n := range names {
		if len(n) != 32 || !isLowerHex(n) {
			return false
		}
	}
	return len(names) > 0
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// kazooSemaphores returns the children of a listing that are kazoo
// semaphores: those with a sibling "<name>-__lock__".
func kazooSemaphores(dir string, names []string) []string {
	var out []string
	has := make(map[string]bool, len(names))
	for _, n := range names {
		has[n] = true
	}
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, kazooSemaphoreLock); ok && has[base] {
			out = append(out, path.Join(dir, base))
		}
	}
	return out
}

// readKazooSemaphore draws a kazoo semaphore's leases: each lease held by
// its node's owner, the limit from the directory's data.
func (in *Inspector) readKazooSemaphore(ctx context.Context, c *zk.Conn, st *scanState, dir string, names []string, cl *Cluster, at time.Time) Lock {
	layout := "kazoo semaphore"
	if data, _, err := c.Get(dir); err == nil {
		if n, err := strconv.Atoi(string(data)); err == nil {
			layout = fmt.Sprintf("kazoo semaphore, limit %d", n)
		}
	}
	var missing []string
	for _, n := range names[:min(len(names), in.statLimit())] {
		if _, ok := st.stats[path.Join(dir, n)]; !ok {
			missing = append(missing, path.Join(dir, n))
		}
	}
	for p, info := range statAll(ctx, c, missing) {
		st.stats[p] = info
	}
	l := Lock{Path: dir, Layout: layout}
	for _, n := range names {
		e := LockEntry{Node: n, Seq: -1, Kind: string(recipes.KindLease), Role: RoleHolder, Age: -1}
		if info, ok := st.stats[path.Join(dir, n)]; ok {
			e.Session = info.Owner
			if !info.Created.IsZero() {
				e.Age = max(at.Sub(info.Created), 0)
			}
		}
		if s, ok := cl.Session(e.Session); ok {
			e.Endpoint = s.Endpoint
		}
		l.Entries = append(l.Entries, e)
	}
	flagHolders(&l, cl, at)
	return l
}

// takenItems reads the "taken" directory beside a kazoo LockingQueue's
// "entries": how many items consumers hold, the oldest and its consumer.
func (in *Inspector) takenItems(ctx context.Context, c *zk.Conn, q *Queue, dir string, at time.Time) {
	if !lockingQueueEntries(dir) {
		return
	}
	taken := path.Join(path.Dir(dir), "taken")
	names, _, err := c.Children(taken)
	if err != nil {
		return // no taken directory: not a LockingQueue
	}
	q.Taken, q.TakenAge = len(names), -1
	if len(names) == 0 {
		return
	}
	nodes, _ := recipes.ParseChildren(names)
	var paths []string
	for _, n := range nodes[:min(len(nodes), 8)] {
		paths = append(paths, path.Join(taken, n.Name))
	}
	infos := statAll(ctx, c, paths)
	for _, p := range paths {
		info, ok := infos[p]
		if !ok || info.Created.IsZero() {
			continue
		}
		if age := max(at.Sub(info.Created), 0); age > q.TakenAge {
			q.TakenAge, q.TakenBy, q.TakenItem = age, info.Owner, path.Base(p)
		}
	}
}

// lockingQueueEntries reports whether dir may be a kazoo LockingQueue's
// "entries" directory, whose items in progress are in its sibling "taken".
func lockingQueueEntries(dir string) bool { return path.Base(dir) == "entries" }
