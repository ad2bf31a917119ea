package exporter

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkherd/zkherd/inspect"
)

// DefaultMaxPaths bounds the path label values of each kind (locks,
// queues): a tree with thousands of lock directories must not become
// thousands of series in the operator's Prometheus.
const DefaultMaxPaths = 100

// OtherPath is the path label of the locks or queues beyond MaxPaths,
// summed into one series (zkherd_exporter_paths_folded says how many).
const OtherPath = "(other)"

// Inspector exports the inspector's snapshots. Each scrape reads the last
// snapshot handed to Update; the servers are asked only at the
// inspector's own pace (its production cost budget), never by a scrape.
type Inspector struct {
	maxPaths int
	poll     prometheus.Histogram

	mu   sync.Mutex
	snap *inspect.Snapshot
}

var (
	descWaiters = prometheus.NewDesc("zkherd_lock_waiters",
		"Contenders waiting for the lock directory (for a herd lock: sessions watching its node).",
		[]string{"path", "layout"}, nil)
	descHolders = prometheus.NewDesc("zkherd_lock_holders",
		"Contenders holding the lock directory.", []string{"path", "layout"}, nil)
	descHolderAge = prometheus.NewDesc("zkherd_lock_holder_age_seconds",
		"Age of the oldest holder's node; absent when the lock is free or the age unknown.",
		[]string{"path"}, nil)
	descHerd = prometheus.NewDesc("zkherd_lock_herd_watchers",
		"Sessions that one release would wake: the most waiters watching one node (1 for a fair lock), or waiting on a child watch of the directory; absent while the servers' watch lists are unknown.",
		[]string{"path"}, nil)
	descQueueDepth = prometheus.NewDesc("zkherd_queue_depth",
		"Items in the queue directory.", []string{"path"}, nil)
	descHeadAge = prometheus.NewDesc("zkherd_queue_head_age_seconds",
		"Age of the queue's oldest item; absent when the queue is empty or the age unknown.",
		[]string{"path"}, nil)
	descLockReadAge = prometheus.NewDesc("zkherd_lock_read_age_seconds",
		"Seconds since the inspector last read the lock directory's children: a directory found unchanged is read less often (up to 8 s or 4 poll intervals apart, whichever is longer), and its figures are that old.",
		[]string{"path"}, nil)
	descQueueReadAge = prometheus.NewDesc("zkherd_queue_read_age_seconds",
		"Seconds since the inspector last read the queue directory's children (see zkherd_lock_read_age_seconds).",
		[]string{"path"}, nil)
	descFolded = prometheus.NewDesc("zkherd_exporter_paths_folded",
		"Lock or queue directories beyond the limit of path label values per kind, summed into the path \""+OtherPath+"\" (waiters and depths added, ages, read ages and herd watchers the largest).",
		[]string{"kind"}, nil)
	descUp = prometheus.NewDesc("zkherd_server_up",
		"Whether the ensemble member answered the inspector's last poll (absent until its first poll ends).",
		[]string{"member"}, nil)
	descLatency = prometheus.NewDesc("zkherd_server_latency_seconds",
		"Request latency the member reports since it started (min, avg, max), as the Servers view shows.",
		[]string{"member", "stat"}, nil)
	descRecentLatency = prometheus.NewDesc("zkherd_server_recent_latency_seconds",
		"Average request latency between the member's last two mntr replies.",
		[]string{"member"}, nil)
	descOutstanding = prometheus.NewDesc("zkherd_server_outstanding_requests",
		"Requests queued in the member.", []string{"member"}, nil)
	descServerWatches = prometheus.NewDesc("zkherd_server_watches",
		"Watches the member holds (mntr zk_watch_count: data and child watches).", []string{"member"}, nil)
	descConnections = prometheus.NewDesc("zkherd_server_connections",
		"Client connections to the member.", []string{"member"}, nil)
	descZnodes = prometheus.NewDesc("zkherd_server_znodes",
		"Znodes in the member's tree.", []string{"member"}, nil)
	descRequestRate = prometheus.NewDesc("zkherd_server_requests_per_second",
		"Requests per second between the member's last two mntr replies.", []string{"member"}, nil)
	descScanComplete = prometheus.NewDesc("zkherd_inspector_scan_complete",
		"1 once the inspector's first walk of the tree ended: before, a lock or queue absent may just not be found yet.",
		nil, nil)
	descScanRead = prometheus.NewDesc("zkherd_inspector_scan_directories_read",
		"Directories the first walk of the tree has read so far, while zkherd_inspector_scan_complete is 0 (the walk is paced: minutes on a large tree).",
		nil, nil)
	descWatchesKnown = prometheus.NewDesc("zkherd_inspector_watches_known",
		"1 when the servers' watch lists were read (herd watchers are judged), 0 when not (more watches than the watch budget, not allowed, or turned off).",
		nil, nil)
	descInterval = prometheus.NewDesc("zkherd_inspector_interval_seconds",
		"Time until the inspector's next poll: the poll interval, stretched while the servers look busy.",
		nil, nil)
	descRequests = prometheus.NewDesc("zkherd_inspector_requests",
		"Requests the inspector's last poll sent for the lock and queue scan (exists and getChildren).",
		nil, nil)
)

// NewInspector returns an Inspector exporter registered with reg, with at
// most maxPaths path label values per kind (DefaultMaxPaths when 0 or less).
func NewInspector(reg prometheus.Registerer, maxPaths int) (*Inspector, error) {
	if maxPaths <= 0 {
		maxPaths = DefaultMaxPaths
	}
	x := &Inspector{maxPaths: maxPaths, poll: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "zkherd_inspector_poll_seconds",
		Help:    "Time the inspector took to collect one snapshot (every member polled, locks and queues read): its own cost.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})}
	if err := reg.Register(x); err != nil {
		return nil, err
	}
	return x, nil
}

// Run takes snapshots from in until ctx ends, at the inspector's own pace
// (each Cost.Interval after the last began), and exports each.
func (x *Inspector) Run(ctx context.Context, in *inspect.Inspector) {
	// The exporter shows who watches what (the herd gauge): the servers'
	// watch lists are asked for, within the watch budget, as the Locks view
	// does; and the members' figures, as the Servers view does. No metric
	// shows the sessions' clients or ephemerals: cons and dump go at the
	// idle pace, as in the terminal's other views (inspect.Shown).
	in.SetShown(inspect.Shown{Watches: true, Servers: true})
	for ctx.Err() == nil {
		start := time.Now()
		snap := in.Snapshot(ctx)
		took := time.Since(start)
		if ctx.Err() != nil {
			return
		}
		x.Update(snap, took)
		t := time.NewTimer(max(snap.Cost.Interval-took, 0))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// Update makes snap the one scrapes read; took is how long it took.
func (x *Inspector) Update(snap *inspect.Snapshot, took time.Duration) {
	x.poll.Observe(took.Seconds())
	x.mu.Lock()
	x.snap = snap
	x.mu.Unlock()
}

// Describe is prometheus.Collector's.
func (x *Inspector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWaiters, descHolders, descHolderAge, descHerd, descQueueDepth, descHeadAge, descLockReadAge, descQueueReadAge,
		descFolded, descUp, descLatency, descRecentLatency, descOutstanding, descServerWatches, descConnections,
		descZnodes, descRequestRate, descScanComplete, descScanRead, descWatchesKnown, descInterval, descRequests} {
		ch <- d
	}
	x.poll.Describe(ch)
}

// Collect is prometheus.Collector's: the last snapshot's figures.
func (x *Inspector) Collect(ch chan<- prometheus.Metric) {
	x.poll.Collect(ch)
	x.mu.Lock()
	snap := x.snap
	x.mu.Unlock()
	if snap == nil {
		return
	}
	emit := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		for i, l := range labels {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD") // server strings: Prometheus takes UTF-8 only
		}
		if m, err := prometheus.NewConstMetric(d, t, v, labels...); err == nil {
			ch <- m
		}
	}
	gauge := prometheus.GaugeValue
	now := time.Now()
	locks, folded := x.foldLocks(snap.Locks, snap.At, now)
	for _, l := range locks {
		emit(descWaiters, gauge, float64(l.waiters), l.path, l.layout)
		emit(descHolders, gauge, float64(l.holders), l.path, l.layout)
		if l.holderAge >= 0 {
			emit(descHolderAge, gauge, l.holderAge.Seconds(), l.path)
		}
		if l.herdKnown {
			emit(descHerd, gauge, float64(l.herd), l.path)
		}
		emit(descLockReadAge, gauge, l.readAge.Seconds(), l.path)
	}
	emit(descFolded, gauge, float64(folded), "lock")
	queues, qfolded := x.foldQueues(snap.Queues, snap.At, now)
	for _, q := range queues {
		emit(descQueueDepth, gauge, float64(q.depth), q.path)
		emit(descQueueReadAge, gauge, q.readAge.Seconds(), q.path)
		if q.headAge >= 0 {
			emit(descHeadAge, gauge, q.headAge.Seconds(), q.path)
		}
	}
	emit(descFolded, gauge, float64(qfolded), "queue")
	for _, m := range snap.Cluster.Members {
		if m.Pending {
			continue
		}
		emit(descUp, gauge, boolFloat(m.Up), m.Addr)
		if !m.Up {
			continue
		}
		emit(descLatency, gauge, m.LatencyMin/1000, m.Addr, "min")
		emit(descLatency, gauge, m.LatencyAvg/1000, m.Addr, "avg")
		emit(descLatency, gauge, m.LatencyMax/1000, m.Addr, "max")
		emit(descOutstanding, gauge, float64(m.Outstanding), m.Addr)
		emit(descServerWatches, gauge, float64(m.Watches), m.Addr)
		emit(descConnections, gauge, float64(m.Connections), m.Addr)
		emit(descZnodes, gauge, float64(m.Znodes), m.Addr)
		if m.RatesKnown {
			emit(descRecentLatency, gauge, m.RecentLatencyAvg/1000, m.Addr)
			emit(descRequestRate, gauge, m.RequestsPerSec, m.Addr)
		}
	}
	emit(descScanComplete, gauge, boolFloat(!snap.Scanning))
	if snap.Scanning {
		emit(descScanRead, gauge, float64(snap.ScanRead))
	}
	emit(descWatchesKnown, gauge, boolFloat(!snap.Cluster.WatchesUnknown))
	emit(descInterval, gauge, snap.Cost.Interval.Seconds())
	emit(descRequests, gauge, float64(snap.Cost.Stats+snap.Cost.Lists))
}

// lockFigures are one lock directory's exported figures.
type lockFigures struct {
	path, layout     string
	waiters, holders int
	holderAge        time.Duration // negative when unknown or free
	herd             int
	herdKnown        bool
	readAge          time.Duration // since the directory was read, at the scrape
}

// scrapeAge is how long before a scrape at now a directory was read,
// when the snapshot taken at at shows it read age before it (ReadAge).
func scrapeAge(age time.Duration, at, now time.Time) time.Duration {
	return age + max(now.Sub(at), 0)
}

// lockFiguresOf are the figures exported for l, from the snapshot taken
// at at, scraped at now.
func lockFiguresOf(l *inspect.Lock, at, now time.Time) lockFigures {
	f := lockFigures{path: l.Path, layout: l.Layout, waiters: l.Waiters(), holders: l.Holders(), holderAge: -1,
		readAge: scrapeAge(l.ReadAge(at), at, now)}
	for _, e := range l.Entries {
		if e.Role == inspect.RoleHolder && e.Age >= 0 {
			f.holderAge = max(f.holderAge, e.Age)
		}
	}
	f.herd, f.herdKnown = HerdWatchers(l)
	return f
}

// HerdWatchers is how many sessions one release of l would wake: the most
// waiters watching one node of it (a fair lock's waiters each watch their
// predecessor: 1; a herd lock's all watch its node), or the waiters on a
// child watch of the directory, which every change fires. Only waiters
// whose watch the servers' lists can speak for are counted: one whose
// node is newer than the lists (WatchExpected) is not. known is false
// while the lists are unknown, or when every waiter is that new (a busy
// lock between two watch lists): a herd cannot be ruled out then, and 0
// would say it was.
func HerdWatchers(l *inspect.Lock) (n int, known bool) {
	if l.WatchUnknown {
		return 0, false
	}
	per := map[string]int{}
	child, judged, waiters := 0, 0, 0
	for _, e := range l.Entries {
		if e.Role != inspect.RoleWaiter {
			continue
		}
		waiters++
		switch e.Watch {
		case inspect.WatchExpected:
			continue
		case inspect.WatchChild:
			child++
		default:
			for _, w := range e.Watching {
				per[w]++
			}
		}
		judged++
	}
	if waiters > 0 && judged == 0 {
		return 0, false
	}
	n = child
	for _, c := range per {
		n = max(n, c)
	}
	return n, true
}

// foldLocks keeps the maxPaths locks with the most waiters and sums the
// rest into one OtherPath series.
func (x *Inspector) foldLocks(locks []inspect.Lock, at, now time.Time) ([]lockFigures, int) {
	fs := make([]lockFigures, len(locks))
	for i := range locks {
		fs[i] = lockFiguresOf(&locks[i], at, now)
	}
	if len(fs) <= x.maxPaths {
		return fs, 0
	}
	slices.SortFunc(fs, func(a, b lockFigures) int {
		return cmp.Or(cmp.Compare(b.waiters, a.waiters), cmp.Compare(a.path, b.path))
	})
	rest := fs[x.maxPaths:]
	other := lockFigures{path: OtherPath, layout: "mixed", holderAge: -1, herdKnown: true}
	for _, f := range rest {
		other.waiters += f.waiters
		other.holders += f.holders
		other.holderAge = max(other.holderAge, f.holderAge)
		other.herd = max(other.herd, f.herd)
		other.herdKnown = other.herdKnown && f.herdKnown
		other.readAge = max(other.readAge, f.readAge)
	}
	return append(fs[:x.maxPaths:x.maxPaths], other), len(rest)
}

// queueFigures are one queue directory's exported figures.
type queueFigures struct {
	path    string
	depth   int
	headAge time.Duration // negative when unknown or empty
	readAge time.Duration // since the directory was read, at the scrape
}

// foldQueues keeps the maxPaths deepest queues and sums the rest.
func (x *Inspector) foldQueues(queues []inspect.Queue, at, now time.Time) ([]queueFigures, int) {
	fs := make([]queueFigures, len(queues))
	for i, q := range queues {
		fs[i] = queueFigures{path: q.Path, depth: q.Depth, headAge: -1, readAge: scrapeAge(q.ReadAge(at), at, now)}
		if q.Depth > 0 && q.HeadAge >= 0 {
			fs[i].headAge = q.HeadAge
		}
	}
	if len(fs) <= x.maxPaths {
		return fs, 0
	}
	slices.SortFunc(fs, func(a, b queueFigures) int {
		return cmp.Or(cmp.Compare(b.depth, a.depth), cmp.Compare(a.path, b.path))
	})
	rest := fs[x.maxPaths:]
	other := queueFigures{path: OtherPath, headAge: -1}
	for _, f := range rest {
		other.depth += f.depth
		other.headAge = max(other.headAge, f.headAge)
		other.readAge = max(other.readAge, f.readAge)
	}
	return append(fs[:x.maxPaths:x.maxPaths], other), len(rest)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
