package inspect

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Snapshot is one collection of everything the cluster views show. Values
// are plain data: they can be recorded (as JSON) and replayed into the views.
type Snapshot struct {
	At      time.Time
	Cluster Cluster
	Locks   []Lock
	Queues  []Queue
	// Herds are ordinary nodes (outside any lock directory) that many
	// sessions watch: each change wakes them all. Listed apart from Locks.
	Herds []Lock
	// Unreadable are directories whose ACL denies this session a listing:
	// locks and queues in them cannot be shown (a notice names them).
	Unreadable []string
	// Notices are things the user should know about this collection, such
	// as a member that does not answer or a lock scan that was cut short.
	Notices []string
	// Cost is what this snapshot asked of the servers.
	Cost Cost
	// Scanning is set until the first walk of the tree has ended: locks
	// and queues it finds join later ("none found" is not known yet). The
	// walk is paced (Options.WalkRate): on a large tree it takes minutes.
	Scanning bool
	// ScanRead is how many directories that first walk has read so far
	// (while Scanning), so that a user sees it progress.
	ScanRead int
}

// lateGrace is how long after its interval the next snapshot may take to
// come: its polls wait at most the poll timeout (2 s by default), a walk
// it starts at most walkWait (1 s), and the scan of known directories a
// few round trips.
const lateGrace = 5 * time.Second

// Overdue says how long past due the snapshot after s is at now: 0 while
// it may still come in time (s.Cost.Interval and lateGrace after s was
// taken). A user must not read an old snapshot as the current state.
func (s *Snapshot) Overdue(now time.Time) time.Duration {
	return max(now.Sub(s.At.Add(s.Cost.Interval+lateGrace)), 0)
}

// sessionsOld is how much older than its snapshot a connection list must
// be to be named: on a quiet server cons is asked every poll or two.
const sessionsOld = 5 * time.Second

// SessionsAsOf says when the sessions shown were listed, when that is
// sessionsOld or more before the snapshot (cons paced on a busy server):
// a count read as current was up to 30 s old ("1 session" beside a run
// of 200 clients).
func (s *Snapshot) SessionsAsOf() (time.Time, bool) {
	at := s.Cluster.SessionsAt
	return at, !at.IsZero() && s.At.Sub(at) >= sessionsOld
}

// Cost is what one snapshot asked of the servers, so that the inspector's
// load on a production ensemble can be stated, not guessed.
type Cost struct {
	// Interval is the time until the next snapshot: the poll interval, times
	// Backoff while the servers look busy (BusyReason says why).
	Interval   time.Duration
	Backoff    int
	BusyReason string
	// Stats, Lists are the exists and getChildren requests sent for the
	// lock and queue scan; Walked the directories the tree walk visited;
	// Names the child names those listings returned.
	Stats, Lists, Walked, Names int
	// Wchp is how many members were asked their watch list.
	Wchp int
}

// Cluster is the merged result of one poll of every member.
type Cluster struct {
	At       time.Time
	Members  []Member
	Sessions []Session   // sorted by ID
	Watches  []PathWatch // data watches by path, sorted by path
	// ItemisedWatches is the number of (path, session) data watches listed
	// by wchp on the members that answered it.
	ItemisedWatches int64
	// TotalWatches is the sum of mntr's zk_watch_count over the members that
	// answered both mntr and wchp; -1 when no member did.
	TotalWatches int64
	// SessionsComplete is true when every member answered cons, so a session
	// missing from Sessions is connected nowhere.
	SessionsComplete bool
	// SessionsAt is when the oldest of the members' connection lists (cons)
	// was taken: cons is paced by its cost (up to 30 s apart on a busy
	// server) and reused meanwhile, so Sessions may be that old. Zero when
	// unknown.
	SessionsAt time.Time
	// SessionsUnknown is set when no member answered cons or dump: the
	// inspector cannot see sessions, and Sessions being empty means nothing.
	SessionsUnknown bool
	// WatchesUnknown is set when a member that is up gave no watch list
	// (wchp not allowed, not asked, or over the watch budget): a session
	// missing from Watches may still watch. WatchesNote says why.
	WatchesUnknown bool
	WatchesNote    string
	// WatchesAt is when the oldest of the members' watch lists was taken
	// (a list is asked only every so often and reused meanwhile): a node
	// listed after it cannot have its watch in the lists yet. Zero when
	// unknown. A session's own member's list (ListsAt) may be newer.
	WatchesAt time.Time
	// Pending is set while a member's first poll is still in flight: its
	// sessions and watches are being confirmed, not missing (the first
	// snapshot shows the tree's locks without waiting for them).
	Pending bool
	// WatchesPending is set when the watch lists are unknown only because
	// they are on their way (a first poll in flight, or wchp asked in the
	// next one): views say "confirming…", not "unknown".
	WatchesPending bool
	Capabilities   []Capability
	// Self is the inspector's own session (0 when unknown).
	Self int64
	// Inspectors are the zkherd inspector sessions seen (Self and those
	// holding the InspectorMarker watch), sorted. Their watches are
	// removed from Watches: looking at a node must not change what a
	// chain says about it.
	Inspectors []int64
}

// ChildWatches is ZooKeeper's blind spot: watches counted by mntr but never
// itemised by wchp, which lists data watches only (exists, getData). Child
// watches (getChildren with a watch) make up the difference. known is false
// when mntr or wchp did not answer.
func (c *Cluster) ChildWatches() (n int64, known bool) {
	if c.TotalWatches < 0 {
		return 0, false
	}
	return max(c.TotalWatches-c.ItemisedWatches, 0), true
}

// ListsAt is when the watch list that would show session id's watches
// was taken: its member's (Member.WatchesAt), as cons last placed the
// session, or else the oldest of all (WatchesAt).
//
// Judging a waiter by its own member's list, not the oldest, matters under
// load: wchp is paced by its cost (up to maxPaced, 30 s, on a loaded
// machine), the members' lists are taken at different times, and a herd's
// waiters live a few seconds (5 s in a 200-client herd-children run): by
// the oldest list every waiter was always newer than the lists, and the
// herd never showed (TestInspectUnderChurnInTmux/herd-children on CI).
// Assumes a session's watches are on the member cons last saw it on: a
// session that moved since is re-judged once the lists catch up.
func (c *Cluster) ListsAt(id int64) time.Time {
	if s, ok := c.Session(id); ok && s.Member != "" {
		for _, m := range c.Members {
			if m.Addr == s.Member && !m.WatchesAt.IsZero() {
				return m.WatchesAt
			}
		}
	}
	return c.WatchesAt
}

// Session returns the session with the given id.
func (c *Cluster) Session(id int64) (Session, bool) {
	i := sort.Search(len(c.Sessions), func(i int) bool { return c.Sessions[i].ID >= id })
	if i < len(c.Sessions) && c.Sessions[i].ID == id {
		return c.Sessions[i], true
	}
	return Session{}, false
}

// Watchers returns the sessions holding a data watch on path.
func (c *Cluster) Watchers(path string) []int64 {
	i := sort.Search(len(c.Watches), func(i int) bool { return c.Watches[i].Path >= path })
	if i < len(c.Watches) && c.Watches[i].Path == path {
		return c.Watches[i].Sessions
	}
	return nil
}

// UpMembers counts the members that answered.
func (c *Cluster) UpMembers() int {
	n := 0
	for _, m := range c.Members {
		if m.Up {
			n++
		}
	}
	return n
}

// Member is one ensemble member as its last poll saw it.
type Member struct {
	Addr string
	Up   bool
	// Pending: the member's first poll has not ended yet (neither up nor
	// down as far as the inspector knows).
	Pending bool
	Err     string // why it is down, or what part of the poll failed
	Mode    string // leader, follower, standalone, observer
	Version string
	Zxid    int64
	// Latency is min/avg/max request latency in ms since the server started
	// (srvr/mntr keep no window).
	LatencyMin, LatencyAvg, LatencyMax float64
	Outstanding                        int64
	Connections                        int64
	Watches                            int64 // mntr zk_watch_count (data and child watches)
	Znodes                             int64
	Ephemerals                         int64
	PacketsReceived, PacketsSent       int64
	// FanOut is how many watchers each kind of event fired, from mntr's
	// node_*_watch_count summaries since the server started: the herd
	// effect as the server sees it.
	FanOut []FanOut
	// RequestsPerSec, RecentLatencyAvg (ms) and RecentFanOut cover the
	// time between the member's last two mntr replies (mntr is paced by
	// its cost: on a large or busy server they are seconds apart); they
	// are known (RatesKnown) once there are two.
	RequestsPerSec   float64
	RecentLatencyAvg float64
	RecentFanOut     []FanOut
	RatesKnown       bool
	// WatchesAt is when the member's watch list in use was taken (zero
	// without one): the list of its own sessions' watches (a session's
	// watches live on the member it is connected to).
	WatchesAt time.Time
}

// FanOut summarises the watchers fired per event of one kind.
type FanOut struct {
	Event string  // created, deleted, changed, children
	Count int64   // events
	Avg   float64 // watchers per event
	Max   int64   // most watchers of one event (0 in windows)
}

// Session is one client session, merged from cons, dump and wchp of every
// member.
type Session struct {
	ID         int64
	Endpoint   string // client address as the server sees it, "" if not connected
	Member     string // server it is connected to, "" if connected nowhere
	LastOp     string
	LatencyAvg int64 // ms
	LatencyMax int64 // ms
	Timeout    time.Duration
	Ephemerals []string // sorted
	Watches    []string // paths with a data watch, sorted
	// Inspector: this session is a zkherd inspector (Cluster.Inspectors),
	// not a client of the ensemble.
	Inspector bool
}

// PathWatch is one path and the sessions holding a data watch on it.
type PathWatch struct {
	Path     string
	Sessions []int64
}

// Capability says whether one member answers one command, and if not, the
// exact configuration line that enables it.
type Capability struct {
	Member    string
	Command   string // a four-letter word or "adminserver"
	Available bool
	Enable    string // config line that enables it; empty when available
}

// Lock is one directory whose children match a known lock layout, as a
// chain: holders first, then waiters in sequence order.
type Lock struct {
	Path   string
	Layout string // which client's layout the children follow, e.g. "curator lock or election"
	// Entries are the contenders in sequence order. For a herd lock (one
	// node everybody watches) the holder is the node and the waiters are the
	// sessions watching it.
	Entries []LockEntry
	// Unrecognised children match no layout; they are listed, not fatal.
	Unrecognised []string
	// WatchUnknown is set when the servers' watch lists were not seen:
	// waiters are not judged (a missing watch may just be unseen).
	WatchUnknown bool
	// WatchPending is set with WatchUnknown while the watch lists are on
	// their way (Cluster.WatchesPending): waiters are being confirmed.
	WatchPending bool
	Anomalies    []Anomaly
	// ReadAt is when the directory's children were last read or found
	// unchanged (zero: unknown, taken as the snapshot's time). A still
	// directory is read less often (still.go): its chain may be older than
	// the snapshot, and the views say so.
	ReadAt time.Time
}

// ReadAge is how much older than the snapshot taken at at the lock's
// chain is: 0 when it was read for that snapshot.
func (l *Lock) ReadAge(at time.Time) time.Duration { return readAge(l.ReadAt, at) }

// readAge is how long before at a directory read at readAt was read; 0
// when it was read for the snapshot taken at at, or when that is unknown.
func readAge(readAt, at time.Time) time.Duration {
	if readAt.IsZero() || !readAt.Before(at) {
		return 0
	}
	return at.Sub(readAt)
}

// Holders counts the entries that hold the lock.
func (l *Lock) Holders() int {
	n := 0
	for _, e := range l.Entries {
		if e.Role == RoleHolder {
			n++
		}
	}
	return n
}

// Waiters counts the entries that wait.
func (l *Lock) Waiters() int {
	n := 0
	for _, e := range l.Entries {
		if e.Role == RoleWaiter {
			n++
		}
	}
	return n
}

// Role is a contender's place in a lock chain.
type Role uint8

// Roles.
const (
	RoleUnknown Role = iota // a semaphore lease whose limit the inspector cannot know
	RoleHolder
	RoleWaiter
)

func (r Role) String() string {
	switch r {
	case RoleHolder:
		return "holder"
	case RoleWaiter:
		return "waiter"
	}
	return "member"
}

// LockEntry is one contender.
type LockEntry struct {
	Node     string // child name; empty for a herd waiter, which has no node
	Seq      int64  // sequence suffix; -1 when the name has none
	Kind     string // lock, read, write, lease, latch
	Role     Role
	Session  int64         // ephemeral owner; 0 when unknown
	Endpoint string        // the session's client address, from cons
	Age      time.Duration // since the node was created; negative when unknown
	// Watching lists the nodes of this lock directory that the session
	// holds a data watch on (child names), from wchp.
	Watching []string
	// Expect is the node this contender should watch: its predecessor
	// (for a reader, the nearest writer before it). Empty for holders.
	Expect string
	// Watch says whether the servers confirm the watch on Expect, and
	// Confirmed how long ago they last did (WatchConfirmed).
	Watch     WatchState
	Confirmed time.Duration
	Flags     AnomalySet
}

// AnomalyKind is something wrong with a lock chain.
type AnomalyKind uint8

// Anomalies a lock chain can show.
const (
	// AnomalyNoWatch: a waiter whose session watches no node of the lock.
	// It may be waiting on a child watch of the directory, which wchp never
	// lists, or it may never wake up.
	AnomalyNoWatch AnomalyKind = iota
	// AnomalyWrongWatch: a waiter watching a node other than its predecessor.
	AnomalyWrongWatch
	// AnomalyHerd: many sessions watching one node; each release wakes all.
	AnomalyHerd
	// AnomalyHolderGone: the holder's session is connected to no member (its
	// node stays until the session expires) or unknown to the servers.
	AnomalyHolderGone
	// AnomalyUnrecognised: children that match no known layout.
	AnomalyUnrecognised
	numAnomalyKinds
)

func (k AnomalyKind) String() string {
	switch k {
	case AnomalyNoWatch:
		return "no watch"
	case AnomalyWrongWatch:
		return "wrong watch"
	case AnomalyHerd:
		return "herd"
	case AnomalyHolderGone:
		return "holder gone"
	case AnomalyUnrecognised:
		return "unrecognised"
	}
	return "AnomalyKind(" + strconv.Itoa(int(k)) + ")"
}

// AnomalySet is a set of anomaly kinds, one bit each.
type AnomalySet uint8

// Has reports whether k is in the set.
func (s AnomalySet) Has(k AnomalyKind) bool { return s&(1<<k) != 0 }

// With returns the set plus k.
func (s AnomalySet) With(k AnomalyKind) AnomalySet { return s | 1<<k }

// String lists the kinds, comma separated.
func (s AnomalySet) String() string {
	var parts []string
	for k := AnomalyKind(0); k < numAnomalyKinds; k++ {
		if s.Has(k) {
			parts = append(parts, k.String())
		}
	}
	return strings.Join(parts, ", ")
}

// Anomaly is one finding about a lock chain.
type Anomaly struct {
	Kind   AnomalyKind
	Node   string // the child concerned; empty for the lock as a whole
	Detail string // one line for the user
}

// Queue is one directory of sequential items, sampled over time.
type Queue struct {
	Path   string
	Layout string
	Depth  int
	// Depths are past depth samples, oldest first, one per read of the
	// directory (a still one is read less often), Depth last.
	Depths []int
	// EnqueueRate and DequeueRate are items per second over the last few
	// polls, from the items that appeared in and left the listings.
	EnqueueRate, DequeueRate float64
	Head                     string        // lowest item
	HeadAge                  time.Duration // age of Head; negative when unknown
	// Taken is how many items consumers have taken and not yet consumed
	// (kazoo LockingQueue's "taken" directory); TakenItem is the oldest,
	// taken TakenAge ago (negative when unknown) by session TakenBy. A
	// consumer stuck on an item shows here, not as an idle queue.
	Taken     int
	TakenItem string
	TakenAge  time.Duration
	TakenBy   int64
	// ReadAt is when the directory was last read (see Lock.ReadAt).
	ReadAt time.Time
}

// ReadAge is how much older than the snapshot taken at at the queue's
// figures are (see Lock.ReadAge).
func (q *Queue) ReadAge(at time.Time) time.Duration { return readAge(q.ReadAt, at) }

// SessionHex formats a session id as ZooKeeper prints it: 0x1000001f3b60001.
func SessionHex(id int64) string {
	return "0x" + strconv.FormatUint(uint64(id), 16)
}
