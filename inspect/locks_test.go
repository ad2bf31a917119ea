package inspect

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/recipes"
)

var at = time.Date(2026, 11, 21, 4, 52, 13, 0, time.UTC)

// curator returns the i-th Curator mutex node name; kind is "lock-",
// "__READ__" or "__WRIT__".
func curator(i int, kind string) string {
	return fmt.Sprintf("_c_%08x-0000-4000-8000-%012x-%s%010d", i, i, kind, i)
}

// fixture is a lock directory: children, their owners (session = 100+i),
// who watches what, and which sessions are connected.
type fixture struct {
	names    []string
	watches  map[string][]int64 // child name -> sessions
	gone     []int64            // sessions known to dump but connected nowhere
	unknown  []int64            // sessions not known at all
	complete bool
	// listedAgo is how long before the snapshot the sessions were listed
	// (Cluster.SessionsAt); the nodes are 10 s apart, the last 10 s old.
	listedAgo time.Duration
}

func (f fixture) build(t *testing.T) Lock {
	t.Helper()
	dir := "/locks/l"
	c := &Cluster{SessionsComplete: f.complete, SessionsAt: at.Add(-f.listedAgo)}
	owner := map[string]int64{}
	for i, n := range f.names {
		id := int64(100 + i)
		owner[n] = id
		if slices.Contains(f.unknown, id) {
			continue
		}
		s := Session{ID: id, Endpoint: fmt.Sprintf("127.0.0.1:%d", 40000+i), Member: "127.0.0.1:2181"}
		if slices.Contains(f.gone, id) {
			s.Endpoint, s.Member, s.Timeout = "", "", 10*time.Second
		}
		c.Sessions = append(c.Sessions, s)
	}
	for n, ids := range f.watches {
		c.Watches = append(c.Watches, PathWatch{Path: dir + "/" + n, Sessions: ids})
	}
	slices.SortFunc(c.Watches, func(a, b PathWatch) int { return strings.Compare(a.Path, b.Path) })
	for _, s := range append(f.watchers(), 0) {
		if _, ok := c.Session(s); !ok && s >= 200 {
			c.Sessions = append(c.Sessions, Session{ID: s, Endpoint: "127.0.0.9:1", Member: "127.0.0.1:2181"})
		}
	}
	slices.SortFunc(c.Sessions, func(a, b Session) int { return cmpInt64(a.ID, b.ID) })
	nodes, unrecognised := recipes.ParseChildren(f.names)
	return buildLock(lockInput{
		Dir: dir, Nodes: nodes, Unrecognised: unrecognised, Cluster: c, At: at,
		Info: func(name string) (nodeInfo, bool) {
			id, ok := owner[name]
			return nodeInfo{Owner: id, Created: at.Add(-time.Duration(len(f.names)-slices.Index(f.names, name)) * 10 * time.Second)}, ok
		},
	})
}

func (f fixture) watchers() []int64 {
	var all []int64
	for _, ids := range f.watches {
		all = append(all, ids...)
	}
	return all
}

// chain is a fair chain of n Curator nodes, each waiter watching its
// predecessor.
func chain(n int) fixture {
	f := fixture{watches: map[string][]int64{}, complete: true}
	for i := 0; i < n; i++ {
		f.names = append(f.names, curator(i, "lock-"))
		if i > 0 {
			f.watches[curator(i-1, "lock-")] = append(f.watches[curator(i-1, "lock-")], int64(100+i))
		}
	}
	return f
}

func kinds(l Lock) []AnomalyKind {
	var ks []AnomalyKind
	for _, a := range l.Anomalies {
		ks = append(ks, a.Kind)
	}
	return ks
}

func TestBuildLock(t *testing.T) {
	tests := []struct {
		name      string
		fixture   func() fixture
		layout    string
		holders   int
		waiters   int
		anomalies []AnomalyKind
		flagged   map[int]AnomalyKind // entry index -> flag it must carry
	}{
		{
			name: "fair chain", fixture: func() fixture { return chain(4) },
			layout: "curator lock or election", holders: 1, waiters: 3,
		},
		{
			name: "waiter watching the wrong node",
			fixture: func() fixture {
				f := chain(4)
				f.watches[curator(2, "lock-")] = nil
				f.watches[curator(0, "lock-")] = append(f.watches[curator(0, "lock-")], 103)
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 3,
			anomalies: []AnomalyKind{AnomalyWrongWatch}, flagged: map[int]AnomalyKind{3: AnomalyWrongWatch},
		},
		{
			name: "waiter without a watch",
			fixture: func() fixture {
				f := chain(3)
				f.watches[curator(1, "lock-")] = nil
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 2,
			anomalies: []AnomalyKind{AnomalyNoWatch}, flagged: map[int]AnomalyKind{2: AnomalyNoWatch},
		},
		{
			name: "many sessions watching the holder",
			fixture: func() fixture {
				f := chain(4)
				f.watches = map[string][]int64{curator(0, "lock-"): {101, 102, 103}}
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 3,
			anomalies: []AnomalyKind{AnomalyWrongWatch, AnomalyHerd}, flagged: map[int]AnomalyKind{1: AnomalyHerd, 2: AnomalyHerd, 3: AnomalyHerd},
		},
		{
			name: "holder connected to no member",
			fixture: func() fixture {
				f := chain(3)
				f.gone = []int64{100}
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 2,
			anomalies: []AnomalyKind{AnomalyHolderGone}, flagged: map[int]AnomalyKind{0: AnomalyHolderGone},
		},
		{
			name: "holder unknown to the servers",
			fixture: func() fixture {
				f := chain(2)
				f.unknown = []int64{100}
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 1,
			anomalies: []AnomalyKind{AnomalyHolderGone},
		},
		{
			// The sessions listed 30 s ago, the holder's node 20 s old: its
			// session may be newer than the list (the lists are minutes
			// old while the Sessions view is not on screen).
			name: "holder newer than the sessions list: not judged",
			fixture: func() fixture {
				f := chain(2)
				f.unknown, f.listedAgo = []int64{100}, 30*time.Second
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 1,
		},
		{
			name: "holder older than the sessions list, connected to no member",
			fixture: func() fixture {
				f := chain(2)
				f.gone, f.listedAgo = []int64{100}, 1*time.Second
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 1,
			anomalies: []AnomalyKind{AnomalyHolderGone}, flagged: map[int]AnomalyKind{0: AnomalyHolderGone},
		},
		{
			name: "holder's session not judged without every member's cons",
			fixture: func() fixture {
				f := chain(2)
				f.gone, f.complete = []int64{100}, false
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 1,
		},
		{
			name: "unrecognised children",
			fixture: func() fixture {
				f := chain(2)
				f.names = append(f.names, "config", "not-a-lock")
				return f
			},
			layout: "curator lock or election", holders: 1, waiters: 1,
			anomalies: []AnomalyKind{AnomalyUnrecognised},
		},
		{
			name: "readers share a writer: neither herd nor wrong",
			fixture: func() fixture {
				f := fixture{complete: true, names: []string{
					curator(0, "__WRIT__"), curator(1, "__READ__"), curator(2, "__READ__"), curator(3, "__READ__"), curator(4, "__WRIT__"),
				}}
				f.watches = map[string][]int64{curator(0, "__WRIT__"): {101, 102, 103}, curator(3, "__READ__"): {104}}
				return f
			},
			layout: "curator rwlock", holders: 1, waiters: 4,
		},
		{
			name: "zkherd herd lock: one node, every waiter watching it",
			fixture: func() fixture {
				return fixture{complete: true, names: []string{recipes.HerdNodeName},
					watches: map[string][]int64{recipes.HerdNodeName: {201, 202, 203, 204}}}
			},
			layout: "zkherd-herd", holders: 1, waiters: 4,
			anomalies: []AnomalyKind{AnomalyHerd}, flagged: map[int]AnomalyKind{1: AnomalyHerd, 2: AnomalyHerd, 3: AnomalyHerd, 4: AnomalyHerd},
		},
		{
			name: "semaphore leases: the limit is not in ZooKeeper",
			fixture: func() fixture {
				return fixture{complete: true, names: []string{curator(0, "lease-"), curator(1, "lease-")}}
			},
			layout: "curator semaphore", holders: 0, waiters: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.fixture().build(t)
			if l.Layout != tt.layout {
				t.Errorf("layout = %q, want %q", l.Layout, tt.layout)
			}
			if l.Holders() != tt.holders || l.Waiters() != tt.waiters {
				t.Errorf("holders %d waiters %d, want %d and %d", l.Holders(), l.Waiters(), tt.holders, tt.waiters)
			}
			if got := kinds(l); !slices.Equal(got, tt.anomalies) {
				t.Errorf("anomalies = %v, want %v (%+v)", got, tt.anomalies, l.Anomalies)
			}
			for i, k := range tt.flagged {
				if !l.Entries[i].Flags.Has(k) {
					t.Errorf("entry %d flags = %v, want %v", i, l.Entries[i].Flags, k)
				}
			}
			for i, e := range l.Entries {
				if _, want := tt.flagged[i]; !want && e.Flags != 0 && tt.flagged != nil {
					t.Errorf("entry %d flagged %v, want none", i, e.Flags)
				}
			}
		})
	}
}

func TestBuildLockDetails(t *testing.T) {
	l := chain(3).build(t)
	e := l.Entries[1]
	if e.Session != 101 || e.Endpoint != "127.0.0.1:40001" {
		t.Errorf("waiter 1 session %s endpoint %q, want 0x65 and 127.0.0.1:40001", SessionHex(e.Session), e.Endpoint)
	}
	if e.Age != 20*time.Second {
		t.Errorf("waiter 1 age = %v, want 20s", e.Age)
	}
	if e.Expect != curator(0, "lock-") || !slices.Equal(e.Watching, []string{curator(0, "lock-")}) {
		t.Errorf("waiter 1 expects %q watches %v, want its predecessor", e.Expect, e.Watching)
	}
	if l.Entries[0].Role != RoleHolder || l.Entries[0].Expect != "" {
		t.Errorf("entry 0 = %+v, want the holder, expecting nothing", l.Entries[0])
	}
}

// TestBuildLockIgnoresSelf: the inspector's own watch on a node it shows
// does not make a herd or a wrong watch.
func TestBuildLockIgnoresSelf(t *testing.T) {
	f := chain(3)
	f.watches[curator(0, "lock-")] = append(f.watches[curator(0, "lock-")], 300, 301)
	nodes, _ := recipes.ParseChildren(f.names)
	c := &Cluster{SessionsComplete: true, Self: 300}
	for i := range f.names {
		c.Sessions = append(c.Sessions, Session{ID: int64(100 + i), Member: "m"})
	}
	for n, ids := range f.watches {
		slices.Sort(ids)
		c.Watches = append(c.Watches, PathWatch{Path: "/l/" + n, Sessions: ids})
	}
	slices.SortFunc(c.Watches, func(a, b PathWatch) int { return strings.Compare(a.Path, b.Path) })
	l := buildLock(lockInput{Dir: "/l", Nodes: nodes, Cluster: c, At: at, Info: func(string) (nodeInfo, bool) { return nodeInfo{}, false }})
	for _, a := range l.Anomalies {
		if a.Kind == AnomalyHerd {
			t.Errorf("herd reported with the inspector's own watch: %+v", a)
		}
	}
}

// TestOwnWatchIgnored: zkherd's contenders also watch their own node (to
// notice losing it); that is not waiting, and not a wrong watch.
func TestOwnWatchIgnored(t *testing.T) {
	f := chain(3)
	for i, n := range f.names {
		f.watches[n] = append(f.watches[n], int64(100+i))
	}
	l := f.build(t)
	if len(l.Anomalies) != 0 {
		t.Errorf("anomalies %+v, want none", l.Anomalies)
	}
	if w := l.Entries[2].Watching; !slices.Equal(w, []string{curator(1, "lock-")}) {
		t.Errorf("waiter 2 watching %v, want only its predecessor", w)
	}
}

func TestConfirmAnomalies(t *testing.T) {
	f := chain(3)
	f.watches[curator(1, "lock-")] = nil
	l := f.build(t)
	prev, now := map[anomalyKey]bool{}, map[anomalyKey]bool{}
	if got := confirmAnomalies(l, prev, now); len(got) != 0 {
		t.Errorf("first sighting reported: %+v", got)
	}
	l = f.build(t)
	got := confirmAnomalies(l, now, map[anomalyKey]bool{})
	if len(got) != 1 || got[0].Kind != AnomalyNoWatch || !l.Entries[2].Flags.Has(AnomalyNoWatch) {
		t.Errorf("second sighting = %+v, flags %v; want the no-watch anomaly", got, l.Entries[2].Flags)
	}
}

func TestShortName(t *testing.T) {
	tests := []struct{ in, want string }{
		{curator(42, "lock-"), "lock-0000000042"},
		{curator(7, "__READ__"), "READ-0000000007"},
		{"_c_0123456789abcdef0123456789abcdef-lock-0000000003", "lock-0000000003"},
		{"0123456789abcdef0123456789abcdef__rlock__0000000009", "rlock-0000000009"},
		{"x-72057594037927937-0000000001", "x-…-0000000001"},
		{"qn-0000000012", "qn-0000000012"},
		{recipes.HerdNodeName, recipes.HerdNodeName},
		{"config", "config"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := ShortName(tt.in); got != tt.want {
				t.Errorf("ShortName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestWatchJudgedAcrossPolls: a waiter's watch is expected while its node
// is newer than the servers' watch lists, confirmed (with the
// confirmation's age) once they list it, still confirmed when a later poll
// misses it, and missing only when a poll after the one that listed its
// node still finds none. A directory where no waiter has a data watch while
// the servers count that many child watches is a herd on the directory.
func TestWatchJudgedAcrossPolls(t *testing.T) {
	names := []string{curator(0, "lock-"), curator(1, "lock-"), curator(2, "lock-"), curator(3, "lock-")}
	sessions := func(n int) []Session {
		var out []Session
		for i := 0; i < n; i++ {
			out = append(out, Session{ID: int64(100 + i), Endpoint: "127.0.0.1:1", Member: "m"})
		}
		return out
	}
	poll := func(mem *watchMemory, n, number int, when time.Time, watches []PathWatch, total int64) Lock {
		nodes, _ := recipes.ParseChildren(names[:n])
		c := &Cluster{At: when.Add(-100 * time.Millisecond), SessionsComplete: true, Watches: watches, Sessions: sessions(n),
			TotalWatches: total, ItemisedWatches: int64(len(watches))}
		return buildLock(lockInput{Dir: "/l", Nodes: nodes, Cluster: c, At: when, Memory: mem, Poll: number,
			Info: func(name string) (nodeInfo, bool) {
				return nodeInfo{Owner: int64(100 + slices.Index(names, name))}, true
			}})
	}
	watch1 := []PathWatch{{Path: "/l/" + names[0], Sessions: []int64{101}}}
	mem := &watchMemory{}

	// Poll 1: waiter 1 confirmed, waiter 2 new (expected).
	l := poll(mem, 3, 1, at, watch1, 1)
	if e := l.Entries[1]; e.Watch != WatchConfirmed || e.Confirmed != 100*time.Millisecond {
		t.Errorf("poll 1, waiter 1: state %d confirmed %v ago, want confirmed 100ms ago", e.Watch, e.Confirmed)
	}
	if e := l.Entries[2]; e.Watch != WatchExpected || e.Flags != 0 {
		t.Errorf("poll 1, waiter 2: state %d flags %v, want expected, unflagged", e.Watch, e.Flags)
	}
	// Poll 2: the servers' lists miss waiter 1 (a slow member): still
	// confirmed, older. Waiter 2 still has none: missing. Waiter 3 is new.
	l = poll(mem, 4, 2, at.Add(time.Second), nil, 0)
	if e := l.Entries[1]; e.Watch != WatchConfirmed || e.Confirmed != 1100*time.Millisecond || e.Flags != 0 {
		t.Errorf("poll 2, waiter 1: state %d confirmed %v ago flags %v, want confirmed 1.1s ago", e.Watch, e.Confirmed, e.Flags)
	}
	if e := l.Entries[2]; e.Watch != WatchMissing || !e.Flags.Has(AnomalyNoWatch) {
		t.Errorf("poll 2, waiter 2: state %d flags %v, want missing, no watch", e.Watch, e.Flags)
	}
	if e := l.Entries[3]; e.Watch != WatchExpected || e.Flags != 0 {
		t.Errorf("poll 2, waiter 3: state %d flags %v, want expected", e.Watch, e.Flags)
	}

	// No data watch anywhere, as many child watches as waiters: a herd on
	// the directory, not three missing watches.
	herd := poll(&watchMemory{}, 4, 2, at, nil, 3)
	for i, e := range herd.Entries[1:] {
		if e.Watch != WatchChild || e.Flags.Has(AnomalyNoWatch) || !e.Flags.Has(AnomalyHerd) {
			t.Errorf("herd-children waiter %d: state %d flags %v, want a child watch in a herd", i+1, e.Watch, e.Flags)
		}
	}
	if got := kinds(herd); !slices.Equal(got, []AnomalyKind{AnomalyHerd}) {
		t.Errorf("herd-children anomalies %v, want only herd", got)
	}
}

// TestStaleWatchListsNoChildHerd: the servers' watch lists are asked only
// every so often (wchp is paced) and reused meanwhile, so under churn a
// fair lock's waiters are all newer than the lists, which still list the
// watches on nodes long gone, while mntr's fresh total counts the waiters'
// child watches on their own nodes (never itemised). Those waiters are
// expected, not missing, and the lock is no herd on a child watch
// (TestInspectUnderChurnInTmux/fair-lock saw "! herd: 199 sessions wait on
// a child watch of lock-000…" under load).
func TestStaleWatchListsNoChildHerd(t *testing.T) {
	const n = 30
	listsAt := at.Add(-20 * time.Second)
	stale := []PathWatch{{Path: "/l/" + curator(1000, "lock-"), Sessions: []int64{999}}}
	mem := &watchMemory{}
	for p, first := range []int{0, 5, 10} { // each poll: waiters come and go
		names := make([]string, 0, n)
		var sessions []Session
		for i := first; i < first+n; i++ {
			names = append(names, curator(i, "lock-"))
			sessions = append(sessions, Session{ID: int64(100 + i), Endpoint: "127.0.0.1:1", Member: "m"})
		}
		nodes, _ := recipes.ParseChildren(names)
		when := at.Add(time.Duration(p) * time.Second)
		c := &Cluster{At: when, SessionsComplete: true, Watches: stale, Sessions: sessions,
			TotalWatches: 2 * n, ItemisedWatches: 1, WatchesAt: listsAt}
		l := buildLock(lockInput{Dir: "/l", Nodes: nodes, Cluster: c, At: when, Listed: when, Memory: mem, Poll: p + 1,
			Info: func(name string) (nodeInfo, bool) {
				return nodeInfo{Owner: int64(100 + first + slices.Index(names, name))}, true
			}})
		if len(l.Anomalies) != 0 {
			t.Errorf("poll %d: anomalies %+v, want none (the waiters are newer than the watch lists)", p+1, l.Anomalies)
		}
		for _, e := range l.Entries[1:] {
			if e.Watch != WatchExpected || e.Flags != 0 {
				t.Errorf("poll %d, waiter %s: state %d flags %v, want expected, unflagged", p+1, ShortName(e.Node), e.Watch, e.Flags)
				break
			}
		}
	}
	// Once the lists are taken after the nodes were listed and still
	// miss the waiters' watches, they are judged.
	names := []string{curator(0, "lock-"), curator(1, "lock-"), curator(2, "lock-"), curator(3, "lock-")}
	nodes, _ := recipes.ParseChildren(names)
	info := func(name string) (nodeInfo, bool) {
		return nodeInfo{Owner: int64(100 + slices.Index(names, name))}, true
	}
	mem = &watchMemory{}
	for p := range 2 {
		when := at.Add(time.Duration(p) * time.Second)
		c := &Cluster{At: when, SessionsComplete: true, Watches: stale, TotalWatches: 1, ItemisedWatches: 1,
			WatchesAt: when.Add(-100 * time.Millisecond)}
		for i := range names {
			c.Sessions = append(c.Sessions, Session{ID: int64(100 + i), Endpoint: "127.0.0.1:1", Member: "m"})
		}
		l := buildLock(lockInput{Dir: "/l", Nodes: nodes, Cluster: c, At: when, Listed: when, Memory: mem, Poll: p + 1, Info: info})
		want := []WatchState{WatchExpected, WatchMissing}[p]
		if e := l.Entries[2]; e.Watch != want {
			t.Errorf("fresh lists, poll %d: waiter state %d, want %d", p+1, e.Watch, want)
		}
	}
}

// TestChildHerdJudgedByEachMembersList: the members' watch lists are
// taken at different times (wchp is paced by its cost, 30 s apart on a
// loaded machine), and a herd's waiters live a few seconds. Judged by the
// oldest list, every waiter was newer than "the lists" and a
// herd-children run was never shown as a herd (CI's
// TestInspectUnderChurnInTmux/herd-children): a waiter is judged by the
// list of the member its session is connected to, which alone holds its
// watches. Waiters on the member whose list is old stay expected.
func TestChildHerdJudgedByEachMembersList(t *testing.T) {
	const n = 30
	var names []string
	var sessions []Session
	for i := range n {
		names = append(names, curator(i, "lock-"))
		member := "fresh:2181"
		if i%3 == 0 {
			member = "stale:2181"
		}
		sessions = append(sessions, Session{ID: int64(100 + i), Endpoint: "127.0.0.1:1", Member: member})
	}
	nodes, _ := recipes.ParseChildren(names)
	info := func(name string) (nodeInfo, bool) {
		return nodeInfo{Owner: int64(100 + slices.Index(names, name))}, true
	}
	mem := &watchMemory{}
	var l Lock
	for p := range 3 {
		when := at.Add(time.Duration(p) * time.Second)
		c := &Cluster{At: when, SessionsComplete: true, Sessions: sessions,
			TotalWatches: n, ItemisedWatches: 0, WatchesAt: at.Add(-30 * time.Second),
			Members: []Member{
				{Addr: "stale:2181", Up: true, WatchesAt: at.Add(-30 * time.Second)},
				{Addr: "fresh:2181", Up: true, WatchesAt: when.Add(-100 * time.Millisecond)},
			}}
		l = buildLock(lockInput{Dir: "/l", Nodes: nodes, Cluster: c, At: when, Listed: when, Memory: mem, Poll: p + 1, Info: info})
	}
	if got := kinds(l); !slices.Equal(got, []AnomalyKind{AnomalyHerd}) {
		t.Fatalf("anomalies %v, want a herd", got)
	}
	for _, e := range l.Entries[1:] {
		if e.Watch != WatchChild || !e.Flags.Has(AnomalyHerd) {
			t.Errorf("waiter %s: state %d flags %v, want a child watch in the herd", ShortName(e.Node), e.Watch, e.Flags)
			break
		}
	}
	if !strings.Contains(l.Anomalies[0].Detail, "20 sessions wait on a child watch") {
		t.Errorf("herd detail %q, want the 20 waiters on the fresh member judged", l.Anomalies[0].Detail)
	}
}

// TestChildHerdOfShortLivedWaiters: while the servers are busy snapshots
// are up to 16 s apart, and a herd's waiter lives a few seconds: every
// node is on its first snapshot, newer than any watch list, and the herd
// was never judged (TestInspectUnderChurnInTmux/herd-children after the
// fair-lock run on a loaded machine). Its sessions queue again and again:
// a session already waiting when its member's list was taken, which lists
// no watch of it on the lock, waits on something the lists do not show.
// A fair lock's sessions, listed watching nodes of the lock (gone since),
// are no herd.
func TestChildHerdOfShortLivedWaiters(t *testing.T) {
	const n = 30
	for _, tt := range []struct {
		name string
		// watched says whether the lists show session i watching a node
		// of the lock (its predecessor then, gone since)
		watched  func(i int) bool
		wantHerd bool
	}{
		{"herd-children", func(int) bool { return false }, true},
		{"fair lock with lists older than its nodes", func(int) bool { return true }, false},
		// Some of a fair lock's sessions were between two watches when
		// the lists were taken (TestInspectUnderChurnInTmux/fair-lock saw
		// "! herd: 3 sessions wait on a child watch"): the others' watches
		// say what the lock is.
		{"fair lock, a few sessions between watches", func(i int) bool { return i%7 != 0 }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := &watchMemory{}
			var l Lock
			for p := range 4 {
				when := at.Add(time.Duration(p) * 16 * time.Second)
				var names []string
				var sessions []Session
				var watches []PathWatch
				for i := range n {
					// Every snapshot lists new nodes, of the same sessions.
					names = append(names, curator(p*n+i, "lock-"))
					s := Session{ID: int64(100 + i), Endpoint: "127.0.0.1:1", Member: "m:2181"}
					if tt.watched(i) && p > 0 {
						gone := "/l/" + curator((p-1)*n+i, "lock-")
						s.Watches = []string{gone}
						watches = append(watches, PathWatch{Path: gone, Sessions: []int64{s.ID}})
					}
					sessions = append(sessions, s)
				}
				nodes, _ := recipes.ParseChildren(names)
				listsAt := when.Add(-8 * time.Second) // after the last snapshot, before this one's listing
				c := &Cluster{At: when, SessionsComplete: true, Sessions: sessions, Watches: watches,
					TotalWatches: int64(n + len(watches)), ItemisedWatches: int64(len(watches)), WatchesAt: listsAt,
					Members: []Member{{Addr: "m:2181", Up: true, WatchesAt: listsAt}}}
				l = buildLock(lockInput{Dir: "/l", Nodes: nodes, Cluster: c, At: when, Listed: when, Memory: mem, Poll: p + 1,
					Info: func(name string) (nodeInfo, bool) {
						return nodeInfo{Owner: int64(100 + slices.Index(names, name))}, true
					}})
				if p == 0 && len(l.Anomalies) != 0 {
					t.Errorf("first snapshot: anomalies %+v, want none (nothing was listed before the lists)", l.Anomalies)
				}
			}
			if got := slices.Equal(kinds(l), []AnomalyKind{AnomalyHerd}); got != tt.wantHerd {
				t.Errorf("herd %v, want %v: anomalies %+v", got, tt.wantHerd, l.Anomalies)
			}
			for _, e := range l.Entries[1:] {
				if e.Flags.Has(AnomalyNoWatch) {
					t.Errorf("waiter %s flagged no watch: it is newer than the lists", ShortName(e.Node))
					break
				}
			}
		})
	}
}
