package inspect

import (
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
)

// Reading still directories less often (issues 24 and 26, the production
// cost budget). Every request of the inspector's that meets another
// client's at the server can delay it, and another client's setData p99
// rose with the count of our requests a second, whatever they asked
// (docs/BENCHMARKS.md): the Locks view's exists of each known lock or
// queue directory every poll was 20 of the 41 requests a second on the
// benchmark's tree, for directories whose children had not changed in
// minutes.
//
// Assumption: a directory whose children were the same at its last reads
// (czxid, cversion and pzxid, sameChildren) is likely the same now, and
// the longer it has been still the likelier. So each read that finds it
// unchanged doubles the time until its next read (a poll interval at
// first), up to stillCap; a read that finds it changed, a new directory,
// and a lock with an anomaly still to be confirmed are read every poll.
//
// What it costs: a still directory's chain may be up to stillCap (8 s, or
// 4 poll intervals if longer; 20 s for the headless exporter's 5 s polls)
// older than the snapshot, until its next read. That is said, not hidden:
// Lock.ReadAt and Queue.ReadAt say when it was read, the Locks and Queues
// views say "last read Ns ago", the exporter zkherd_lock_read_age_seconds.
// The figures that do not come from the listing stay current: the holder's
// age grows with the clock, and the servers' session and watch lists
// (four-letter words, on their own pace) are judged against the chain at
// every snapshot.
//
// Where it fails: a lock that was idle and starts moving (a holder
// releases after minutes) is seen up to stillCap late, and from then on
// every poll while it keeps changing (TestStillDirectoryChangeSeen).
const (
	// DefaultStillCap is the longest a still directory goes unread, on
	// the terminal's 1 s polls (Options.StillCap).
	DefaultStillCap = 8 * time.Second
	// stillCapPolls: with longer poll intervals the cap is this many of
	// them, so that a still directory is skipped by a few polls, not none.
	stillCapPolls = 4
)

// stillness is what the scan remembers of one directory's reads.
type stillness struct {
	// gap is how long the directory is left unread after its last read:
	// 0 while it changes (read every poll), then a poll interval, doubling
	// up to the cap while its reads find it unchanged.
	gap time.Duration
	// next is when it is due to be read again.
	next time.Time
}

// stillCap is the longest a still directory goes unread.
func (in *Inspector) stillCap() time.Duration {
	if in.opts.StillCap > 0 {
		return in.opts.StillCap
	}
	return max(DefaultStillCap, stillCapPolls*in.pollInterval())
}

// due reports whether a directory with this record is read in the
// snapshot taken at at. Snapshots come a poll interval apart give or take
// the time each takes, so one due within half an interval is read now:
// otherwise a read due at 2 s would wait for the snapshot at 3 s.
func (s stillness) due(at time.Time, poll time.Duration) bool {
	return !at.Before(s.next.Add(-poll / 2))
}

// read records a read at at: same says whether it found the children as
// they were at the read before. urgent keeps the directory at every poll
// (an anomaly to confirm).
func (s *stillness) read(at time.Time, same, urgent bool, poll, limit time.Duration) {
	switch {
	case !same || urgent:
		s.gap = 0
	default:
		s.gap = min(max(2*s.gap, poll), limit)
	}
	s.next = at.Add(s.gap)
}

// sameStat reports whether a listing's stat shows the children of the one
// before it (nil before: a first read, not the same).
func sameStat(before, now *zk.Stat) bool {
	return before != nil && now != nil && sameChildren(now, before)
}

// mayWait reports whether directory d may be left unread while it is
// still: a lock, or a queue already read once. Not a kazoo Semaphore
// (its limit is the directory's data, which the children's stat does not
// cover), nor a kazoo LockingQueue's entries (an item taken changes its
// sibling "taken", not the entries).
func (in *Inspector) mayWait(st *scanState, d string) bool {
	switch st.dirs[d] {
	case dirLock:
		return !st.kazooSems[d]
	case dirQueue:
		rec := st.queues[d]
		return rec != nil && rec.last != nil && !lockingQueueEntries(d)
	}
	return false
}

// shownAgain is the queue as last read (at lastAt, its listing taken at
// readAt), shown in the snapshot taken at at: its ages grown by the time
// since, the rest as read.
func (rec *queueRec) shownAgain(at, readAt time.Time) Queue {
	q := *rec.last
	q.Depths = slices.Clone(q.Depths)
	since := max(at.Sub(rec.lastAt), 0)
	if q.HeadAge >= 0 {
		q.HeadAge += since
	}
	if q.Taken > 0 && q.TakenAge >= 0 {
		q.TakenAge += since
	}
	q.ReadAt = readAt
	return q
}

// awaitingConfirmation reports whether the lock shows an anomaly that the
// snapshot before did not (confirmAnomalies, before it runs): two reads
// in a row must show one, so the directory is read at the next poll.
func awaitingConfirmation(l Lock, prev map[anomalyKey]bool) bool {
	for _, a := range l.Anomalies {
		if a.Kind != AnomalyUnrecognised && a.Kind != AnomalyHerd && !prev[anomalyKey{l.Path, a.Node, a.Kind}] {
			return true
		}
	}
	for _, e := range l.Entries {
		for k := AnomalyKind(0); k < numAnomalyKinds; k++ {
			if k != AnomalyHerd && e.Flags.Has(k) && !prev[anomalyKey{l.Path, e.Node, k}] {
				return true
			}
		}
	}
	return false
}
