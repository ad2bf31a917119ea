package inspect

import (
	"context"
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/recipes"
)

// readLock fills node owners and ages (up to StatLimit stats, cached) and
// builds the chain of a directory listed (or its listing confirmed) at
// listed.
func (in *Inspector) readLock(ctx context.Context, c *zk.Conn, st *scanState, dir string, nodes []recipes.Node,
	unrecognised []string, owners map[string]int64, cl *Cluster, at, listed time.Time) Lock {
	var missing []string
	for i, n := range nodes {
		if i >= in.statLimit() {
			break
		}
		p := path.Join(dir, n.Name)
		if _, ok := st.stats[p]; !ok {
			missing = append(missing, p)
		}
	}
	for p, info := range statAll(ctx, c, missing) {
		st.stats[p] = info
	}
	sem, _ := waitingRoom(dir, func(leases string) bool {
		ok, known := st.leases[leases]
		if !known {
			ok, _, _ = c.Exists(leases)
			st.leases[leases] = ok
		}
		return ok
	})
	l := buildLock(lockInput{
		Dir:          dir,
		WaitingFor:   sem,
		Nodes:        nodes,
		Unrecognised: unrecognised,
		Cluster:      cl,
		At:           at,
		Listed:       listed,
		HerdMin:      in.opts.HerdThreshold,
		Memory:       &st.watches,
		Poll:         st.polls,
		Info: func(name string) (nodeInfo, bool) {
			p := path.Join(dir, name)
			if info, ok := st.stats[p]; ok {
				return info, true
			}
			if owner, ok := owners[p]; ok {
				return nodeInfo{Owner: owner}, true
			}
			return nodeInfo{}, false
		},
	})
	l.ReadAt = listed
	return l
}

// statAll stats paths, pipelined.
func statAll(ctx context.Context, c *zk.Conn, paths []string) map[string]nodeInfo {
	type result struct {
		p    string
		info nodeInfo
		ok   bool
	}
	out := make(map[string]nodeInfo, len(paths))
	for _, r := range pipelined(ctx, paths, func(p string) result {
		ok, stat, err := c.Exists(p)
		if err != nil || !ok {
			return result{}
		}
		return result{p, infoOf(stat), true}
	}) {
		if r.ok {
			out[r.p] = r.info
		}
	}
	return out
}

// readQueue samples a queue directory: depth, rates, head age. ok is false
// when the items are ephemeral (then it is not a queue). A head consumed
// since the listing does not make the queue vanish: the next items are
// tried, then the newest ones (persistentTail), and a directory already
// known as a queue stays one.
func (in *Inspector) readQueue(c *zk.Conn, st *scanState, dir string, nodes []recipes.Node, stat *zk.Stat, at time.Time) (Queue, bool) {
	head, age := "", time.Duration(-1)
	for _, n := range nodes[:min(len(nodes), 8)] {
		info, ok := cachedStat(c, st, path.Join(dir, n.Name))
		if !ok {
			continue // consumed since the listing
		}
		if info.Owner != 0 {
			return Queue{}, false
		}
		head, age = n.Name, max(at.Sub(info.Created), 0)
		break
	}
	if head == "" && st.dirs[dir] != dirQueue && !persistentTail(c, st, dir, nodes) {
		return Queue{}, false
	}
	q := in.sampleQueue(st, dir, nodes, at)
	q.Layout = string(nodes[0].Layout)
	q.Head, q.HeadAge = head, age
	return q, true
}

// persistentTail reports whether the newest items of a listing whose
// head items were all consumed since it was taken are persistent: a queue
// consumed fast (its head taken within milliseconds of being listed) is
// still a queue, only its head is not known.
func persistentTail(c *zk.Conn, st *scanState, dir string, nodes []recipes.Node) bool {
	for i := len(nodes) - 1; i >= max(len(nodes)-8, 8); i-- {
		if info, ok := cachedStat(c, st, path.Join(dir, nodes[i].Name)); ok {
			return info.Owner == 0
		}
	}
	return false
}

// cachedStat is node p's owner and creation time, from the scan's cache or
// else read (and cached); ok is false when p is gone or unreadable.
func cachedStat(c *zk.Conn, st *scanState, p string) (nodeInfo, bool) {
	if info, ok := st.stats[p]; ok {
		return info, true
	}
	exists, stat, err := c.Exists(p)
	if err != nil || !exists {
		return nodeInfo{}, false
	}
	info := infoOf(stat)
	st.stats[p] = info
	return info, true
}

// infoOf is what the scan keeps of a node's stat.
func infoOf(stat *zk.Stat) nodeInfo {
	return nodeInfo{Owner: stat.EphemeralOwner, Created: time.UnixMilli(stat.Ctime)}
}

func (in *Inspector) emptyQueue(st *scanState, dir string, stat *zk.Stat, at time.Time) Queue {
	q := in.sampleQueue(st, dir, nil, at)
	q.HeadAge = -1
	return q
}

// sampleQueue records a depth sample and derives the rates.
func (in *Inspector) sampleQueue(st *scanState, dir string, nodes []recipes.Node, at time.Time) Queue {
	q := Queue{Path: dir, Depth: len(nodes)}
	rec := st.queues[dir]
	if rec == nil {
		rec = &queueRec{}
		st.queues[dir] = rec
	}
	q.EnqueueRate, q.DequeueRate = rec.flow(seqsOf(nodes), at)
	rec.depths = append(rec.depths, q.Depth)
	if len(rec.depths) > queueHistoryLen {
		rec.depths = rec.depths[len(rec.depths)-queueHistoryLen:]
	}
	q.Depths = slices.Clone(rec.depths)
	return q
}

// confirmAnomalies keeps the anomalies also present in the previous
// snapshot, records this snapshot's in now, and clears the flags of entries
// whose anomalies are not confirmed yet. Unrecognised children and herds
// need no confirmation: they are facts of one listing.
func confirmAnomalies(l Lock, prev, now map[anomalyKey]bool) []Anomaly {
	keep := l.Anomalies[:0:0]
	for _, a := range l.Anomalies {
		k := anomalyKey{l.Path, a.Node, a.Kind}
		now[k] = true
		if prev[k] || a.Kind == AnomalyUnrecognised || a.Kind == AnomalyHerd {
			keep = append(keep, a)
		}
	}
	for i := range l.Entries {
		e := &l.Entries[i]
		var flags AnomalySet
		for k := AnomalyKind(0); k < numAnomalyKinds; k++ {
			if !e.Flags.Has(k) {
				continue
			}
			if key := (anomalyKey{l.Path, e.Node, k}); prev[key] || k == AnomalyHerd {
				flags = flags.With(k)
			}
			now[anomalyKey{l.Path, e.Node, k}] = true
		}
		e.Flags = flags
	}
	return keep
}

// looseHerds reports nodes outside the lock directories that many sessions
// watch, as one-node locks: everyone waiting on one node is a herd whatever
// the recipe.
func (in *Inspector) looseHerds(snap *Snapshot, owners map[string]int64) []Lock {
	herdMin := in.opts.HerdThreshold
	if herdMin <= 0 {
		herdMin = DefaultHerdThreshold
	}
	inLock := map[string]bool{}
	for _, l := range snap.Locks {
		inLock[l.Path] = true
	}
	var out []Lock
	c := &snap.Cluster
	for _, w := range c.Watches {
		dir, name := path.Split(w.Path)
		dir = path.Clean(dir)
		if len(w.Sessions) < herdMin || inLock[dir] || SystemNode(w.Path) {
			continue
		}
		if _, ok := in.rel(w.Path); !ok {
			continue
		}
		// A Curator DistributedBarrier is such a node too, and there
		// waking every waiter is the point: which it is cannot be known.
		l := Lock{Path: w.Path, Layout: "watched node (barrier or herd)"}
		holder := LockEntry{Node: name, Seq: -1, Kind: "node", Role: RoleHolder, Age: -1}
		if owner, ok := owners[w.Path]; ok {
			holder.Session = owner
			if s, ok := c.Session(owner); ok {
				holder.Endpoint = s.Endpoint
			}
		} else {
			holder.Role = RoleUnknown
		}
		l.Entries = append([]LockEntry{holder}, herdWaiters(name, w.Sessions, c)...)
		for i := 1; i < len(l.Entries); i++ {
			l.Entries[i].Flags = l.Entries[i].Flags.With(AnomalyHerd)
		}
		shown, _ := in.rel(w.Path)
		l.Anomalies = []Anomaly{{Kind: AnomalyHerd, Node: name,
			Detail: fmt.Sprintf("%d sessions watch %s: a change wakes them all", len(w.Sessions), shown)}}
		out = append(out, l)
	}
	return out
}
