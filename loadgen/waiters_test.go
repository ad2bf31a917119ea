package loadgen

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/figures"
)

// TestWaitGraph: during a fair lock the waiters queue by sequence, each
// watching its own predecessor, and a release wakes one; during a herd
// lock every waiter watches the one node, and a release wakes the herd.
func TestWaitGraph(t *testing.T) {
	ens := enstest.Start(t, 1)
	const clients = 12
	tests := []struct {
		scenario string
		herd     bool
	}{
		{"fair-lock", false},
		{"herd-lock", true},
		{"herd-children", true},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			run := shortRun(t, tt.scenario, clients, 3*time.Second)
			var (
				mu     sync.Mutex
				graphs []*WaitGraph
				last   Progress
			)
			_, err := Run(context.Background(), run, Options{
				Servers: ens.Servers(), Interval: 250 * time.Millisecond, ProgressPhases: true,
				Progress: func(p Progress) {
					mu.Lock()
					defer mu.Unlock()
					if p.Lock != nil && p.State == "running" {
						graphs = append(graphs, p.Lock)
					}
					last = p
				},
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(last.Timeline) == 0 || len(last.Buckets) == 0 {
				t.Errorf("final progress has %d intervals and %d phase histograms, want some", len(last.Timeline), len(last.Buckets))
			}
			// The busiest graph: most waiters watching (just after a herd
			// release, every waiter is racing to create, watching nothing).
			watching := func(g *WaitGraph) int {
				n := 0
				for _, f := range g.Fan {
					n += f.Waiters
				}
				return n
			}
			var g *WaitGraph
			for _, x := range graphs {
				if g == nil || watching(x) > watching(g) {
					g = x
				}
			}
			if g == nil || g.WaitersTotal < clients/2 {
				t.Fatalf("no graph with at least %d waiters (best %+v)", clients/2, g)
			}
			if len(g.Holders) > 1 {
				t.Errorf("%d holders: %+v", len(g.Holders), g.Holders)
			}
			for _, x := range graphs {
				for _, h := range x.Holders {
					if h.Node == "" {
						t.Errorf("holder without its node: %+v", h)
					}
				}
			}
			if len(g.Fan) == 0 {
				t.Fatalf("no watched path in %+v", g)
			}
			var woke float64
			for _, x := range graphs {
				woke = max(woke, x.WokePerRelease)
			}
			if !tt.herd {
				// Every waiter with a node after the first watches the
				// node just before it in the queue.
				checked := 0
				for i := 1; i < len(g.Waiters); i++ {
					w, prev := g.Waiters[i], g.Waiters[i-1]
					if w.Node == "" || prev.Node == "" || w.Watching == "" {
						continue
					}
					checked++
					if w.Watching != prev.Node {
						t.Errorf("waiter %s watches %s, want its predecessor %s", g.ShortPath(w.Node), g.ShortPath(w.Watching), g.ShortPath(prev.Node))
					}
				}
				if checked < 3 {
					t.Errorf("only %d waiters with a watched predecessor in %+v", checked, g.Waiters)
				}
				if g.Fan[0].Waiters != 1 {
					t.Errorf("fair lock: %d waiters on %s, want 1 per node", g.Fan[0].Waiters, g.Fan[0].Path)
				}
				if woke > 3 {
					t.Errorf("fair lock woke %.1f per release, want about 1", woke)
				}
				return
			}
			if g.Fan[0].Waiters < clients/2 {
				t.Errorf("herd: the most watched path %s has %d waiters, want at least %d", g.Fan[0].Path, g.Fan[0].Waiters, clients/2)
			}
			if tt.scenario == "herd-children" && !strings.HasSuffix(g.Fan[0].Path, "/") {
				t.Errorf("herd-children: the fan is on %s, want a child watch on the directory", g.Fan[0].Path)
			}
			if woke < clients/3 {
				t.Errorf("herd woke at most %.1f per release, want about %d", woke, clients-1)
			}
		})
	}
}

// BenchmarkLockGraph: the wait graph of 10,000 clients queued on one fair
// lock, built once per interval while the dashboard is on.
func BenchmarkLockGraph(b *testing.B) {
	r := &runner{}
	w := &lockWork{r: r, paths: []string{"/zkherd/runs/x/lock-000"}}
	r.work = w
	now := time.Now()
	node := func(i int) string {
		return fmt.Sprintf("%s/_c_%08x-0000-4000-8000-%012x-lock-%010d", w.paths[0], i, i, i)
	}
	for i := 0; i < 10000; i++ {
		c := &client{idx: i, tap: &tap{}}
		c.tap.seen.begin(now.Add(-time.Duration(10000-i) * time.Millisecond))
		c.tap.seen.created(node(i))
		if i == 0 {
			c.tap.seen.hold(now)
		} else {
			c.tap.seen.watch(node(i-1), now)
		}
		r.clients = append(r.clients, c)
	}
	b.ReportAllocs()
	for b.Loop() {
		g := r.lockGraph(func() time.Time { return now })
		if g.WaitersTotal != 9999 || len(g.Holders) != 1 {
			b.Fatalf("graph of %d waiters and %d holders, want 9,999 and 1", g.WaitersTotal, len(g.Holders))
		}
	}
}

// TestWakeupsPerRelease: in a real run a fair lock's release wakes its one
// successor and a herd lock's wakes every waiter. A notification delivered
// to the releasing client about its own node (the holder's own-node watch,
// which tells it when someone else deleted its node) is no wake-up: it
// used to count, and the fair lock showed 2.00 per release.
func TestWakeupsPerRelease(t *testing.T) {
	ens := enstest.Start(t, 1)
	const clients = 12
	tests := []struct {
		scenario string
		min, max float64
	}{
		{"fair-lock", 0.8, 1.2},
		// Every waiter still queued, minus the ones between a grant and
		// their next acquisition: about clients-1.
		{"herd-lock", clients / 2, clients},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			run := shortRun(t, tt.scenario, clients, 3*time.Second)
			var (
				mu       sync.Mutex
				dashWoke []float64
			)
			res, err := Run(context.Background(), run, Options{
				Servers: ens.Servers(), Interval: 250 * time.Millisecond, ProgressPhases: true,
				Progress: func(p Progress) {
					mu.Lock()
					defer mu.Unlock()
					if p.Lock != nil && p.State == "running" && p.Lock.Releases > 5 {
						dashWoke = append(dashWoke, p.Lock.WokePerRelease)
					}
				},
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Releases < 20 {
				t.Fatalf("%d releases, want at least 20", res.Releases)
			}
			t.Logf("%.2f wake-ups per release over %d releases", figures.Get(res.Totals, figures.WakeupsPerRelease), res.Releases)
			if got := figures.Get(res.Totals, figures.WakeupsPerRelease); got < tt.min || got > tt.max {
				t.Errorf("report: %.2f wake-ups per release (%d over %d releases), want %.1f to %.1f",
					got, res.Totals[figures.Wakeups], res.Releases, tt.min, tt.max)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(dashWoke) == 0 {
				t.Fatal("no dashboard interval with releases")
			}
			slices.Sort(dashWoke)
			if got := dashWoke[len(dashWoke)/2]; got < tt.min || got > tt.max {
				t.Errorf("dashboard: median %.2f woken per release over %d intervals, want %.1f to %.1f", got, len(dashWoke), tt.min, tt.max)
			}
		})
	}
}

// TestWaitGraphOneHolder: a fair lock's graph never shows two holders. Its
// successor is granted as soon as the release deletes (or marks) the
// holder's node, before the release call returns; a holder still drawn
// then reads as a broken lock ("+1 more holders!") on the dashboard. The
// graph is taken every 50 ms so that such overlaps are caught.
func TestWaitGraphOneHolder(t *testing.T) {
	ens := enstest.Start(t, 1)
	// 8 s: under -race on a busy CI machine the 50 ms progress ticks
	// stretch (17 graphs in 5 s were seen); the check needs enough graphs
	// to catch a hand-off drawn with its old holder still in.
	run := shortRun(t, "fair-lock", 50, 8*time.Second)
	var (
		mu          sync.Mutex
		graphs, two int
	)
	_, err := Run(context.Background(), run, Options{
		Servers: ens.Servers(), Interval: 50 * time.Millisecond, ProgressPhases: true,
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.Lock == nil {
				return
			}
			graphs++
			if len(p.Lock.Holders) > 1 {
				two++
				t.Logf("%s: %d holders: %+v", p.State, len(p.Lock.Holders), p.Lock.Holders)
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if graphs < 15 || two > 0 {
		t.Errorf("%d of %d graphs show more than one holder, want none of at least 15", two, graphs)
	}
}

func TestBusier(t *testing.T) {
	held := []Contender{{Client: 1}}
	tests := []struct {
		name string
		a, b WaitGraph
		want bool
	}{
		{"a release beats more waiters", WaitGraph{Releases: 1, WaitersTotal: 5}, WaitGraph{WaitersTotal: 50, Holders: held}, true},
		{"a holder beats more waiters", WaitGraph{Releases: 1, Holders: held, WaitersTotal: 5}, WaitGraph{Releases: 1, WaitersTotal: 50}, true},
		{"a drawn waiter beats more waiters", WaitGraph{Releases: 1, WaitersTotal: 5, Fan: []WatchCount{{Path: "/l/lock-0", Waiters: 5}}}, WaitGraph{Releases: 1, WaitersTotal: 30}, true},
		{"then the most waiters", WaitGraph{Releases: 2, Holders: held, WaitersTotal: 50}, WaitGraph{Releases: 9, Holders: held, WaitersTotal: 49}, true},
		{"a tie is not busier", WaitGraph{Releases: 1, WaitersTotal: 5}, WaitGraph{Releases: 3, WaitersTotal: 5}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := busier(&tt.a, &tt.b); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLockGraphKeepsFirst: the graph's holders, first waiters and most
// watched paths, kept in order as the clients are scanned, are those of
// sorting every waiter and every watched path (queue order, then the
// longest waiting, then scan order; most watched,
// then by path), with ties in sequence, age and fan, nodes not yet
// created, nodes of another layout, idle clients and other locks' clients.
// A second graph of the same clients, reusing the fan's map, is the same.
func TestLockGraphKeepsFirst(t *testing.T) {
	r := &runner{}
	w := &lockWork{r: r, paths: []string{"/zkherd/runs/x/lock-000"}}
	r.work = w
	now := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		c := &client{idx: i, slot: rng.IntN(4) / 3, tap: &tap{}}
		s := &c.tap.seen
		s.begin(now.Add(-time.Duration(rng.IntN(50)) * time.Millisecond))
		switch rng.IntN(10) {
		case 0:
			s.rest()
		case 1:
			s.hold(now.Add(-time.Duration(rng.IntN(50)) * time.Millisecond))
		default:
			switch seq := rng.IntN(400); {
			case seq < 20: // no node yet
			case seq < 30:
				s.created(w.paths[0] + "/not-a-recipe-node")
			default:
				s.created(fmt.Sprintf("%s/_c_%08x-0000-4000-8000-%012x-lock-%010d", w.paths[0], i, i, seq))
			}
			switch k := rng.IntN(6); k {
			case 0: // no watch
			case 1, 2:
				s.watch(fmt.Sprintf("%s/shared-%d", w.paths[0], k), now)
			default:
				s.watch(fmt.Sprintf("%s/own-%d", w.paths[0], i), now)
			}
		}
		r.clients = append(r.clients, c)
	}

	var (
		want    WaitGraph
		waiters []Contender
		fan     = map[string]int{}
	)
	for _, c := range r.clients {
		s := &c.tap.seen
		if c.slot != 0 {
			continue
		}
		ct := Contender{Client: c.idx, Node: s.node, Watching: s.watching, For: now.Sub(s.since)}
		if s.watching != "" {
			ct.WatchFor = now.Sub(s.watchSince)
		}
		switch s.doing {
		case holding:
			want.Holders = append(want.Holders, ct)
		case acquiring:
			want.WaitersTotal++
			if s.watching != "" {
				fan[s.watching]++
			}
			if s.node != "" || s.watching != "" {
				waiters = append(waiters, ct)
			}
		}
	}
	seq := func(c Contender) int64 {
		if c.Node == "" {
			return 1 << 62
		}
		return seqOf(c.Node)
	}
	slices.SortStableFunc(waiters, func(a, b Contender) int {
		return cmp.Or(cmp.Compare(seq(a), seq(b)), cmp.Compare(b.For, a.For))
	})
	want.Waiters = waiters[:MaxWaitersShown]
	for p, n := range fan {
		want.Fan = append(want.Fan, WatchCount{Path: p, Waiters: n})
	}
	slices.SortFunc(want.Fan, func(a, b WatchCount) int {
		return cmp.Or(cmp.Compare(b.Waiters, a.Waiters), strings.Compare(a.Path, b.Path))
	})
	want.Fan = want.Fan[:maxFan]

	for round := range 2 {
		g := r.lockGraph(func() time.Time { return now })
		if g.WaitersTotal != want.WaitersTotal {
			t.Errorf("graph %d: %d waiters in all, want %d", round, g.WaitersTotal, want.WaitersTotal)
		}
		if !slices.Equal(g.Holders, want.Holders) {
			t.Errorf("graph %d: holders\n%+v\nwant\n%+v", round, g.Holders, want.Holders)
		}
		if !slices.Equal(g.Waiters, want.Waiters) {
			t.Errorf("graph %d: waiters\n%+v\nwant\n%+v", round, g.Waiters, want.Waiters)
		}
		if !slices.Equal(g.Fan, want.Fan) {
			t.Errorf("graph %d: fan %+v, want %+v", round, g.Fan, want.Fan)
		}
	}
}

// TestLockGraphGrantDuringScan: a client granted the lock while the graph
// is being built. The graph's time used to be read before the scan, so a
// holder granted after that read was drawn holding for a negative time
// ("For:-113µs", clamped to 0: "HOLD lock-0000001064 c9 0"). The time is
// now read after the scan: a state the scan saw is always older than it.
func TestLockGraphGrantDuringScan(t *testing.T) {
	r := &runner{}
	w := &lockWork{r: r, paths: []string{"/zkherd/runs/x/lock-000"}}
	r.work = w
	base := time.Now()
	c := &client{idx: 9, tap: &tap{}}
	c.tap.seen.begin(base)
	c.tap.seen.created(w.paths[0] + "/_c_00000009-0000-4000-8000-000000000009-lock-0000001064")
	r.clients = append(r.clients, c)

	// The clock's read is where the grant lands: just after it, stamped
	// with a later reading, as a hold loop does.
	at := base.Add(10 * time.Millisecond)
	clock := func() time.Time {
		c.tap.seen.hold(at.Add(time.Millisecond))
		return at
	}
	g := r.lockGraph(clock)
	if !g.At.Equal(at) {
		t.Fatalf("graph at %v, want the clock's %v", g.At.Sub(base), at.Sub(base))
	}
	for _, h := range g.Holders {
		if h.For < 0 {
			t.Errorf("holder c%d held for %v, want no negative age", h.Client, h.For)
		}
	}
	if len(g.Holders) != 0 || len(g.Waiters) != 1 || g.Waiters[0].For != 10*time.Millisecond {
		t.Errorf("holders %+v, waiters %+v; want no holder and c9 waiting for 10ms (its state when the clock was read)", g.Holders, g.Waiters)
	}

	// The next graph sees the grant, 1ms old at its time.
	at = at.Add(2 * time.Millisecond)
	g = r.lockGraph(func() time.Time { return at })
	if len(g.Holders) != 1 || g.Holders[0].For != time.Millisecond {
		t.Errorf("holders %+v, want c9 holding for 1ms", g.Holders)
	}
}

// TestLockGraphHandOffDuringScan: the graph reads its clients one at a
// time, so a holder read before its release and its successor read after
// the grant were both drawn holding a lock that never had two. The clock,
// read once the scan is over, plays what happened meanwhile.
func TestLockGraphHandOffDuringScan(t *testing.T) {
	tests := []struct {
		name string
		// meanwhile runs between the scan and the graph's time, on the
		// two clients the scan read holding (a, read first, then b).
		meanwhile func(a, b *seen, at time.Time)
		want      []int // the holders drawn, by client
	}{
		{"the first released: its successor holds", func(a, b *seen, _ time.Time) { a.releasing() }, []int{1}},
		{"the first released and waits again", func(a, b *seen, at time.Time) { a.releasing(); a.rest(); a.begin(at) }, []int{1}},
		{"the first holds again: a new grant, not the one read", func(a, b *seen, at time.Time) {
			a.releasing()
			a.rest()
			a.begin(at)
			a.hold(at)
		}, []int{1}},
		{"both released: the one granted last stands", func(a, b *seen, _ time.Time) { a.releasing(); b.releasing() }, []int{1}},
		{"both still hold: a broken lock shows two", func(a, b *seen, _ time.Time) {}, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runner{}
			w := &lockWork{r: r, paths: []string{"/zkherd/runs/x/lock-000"}}
			r.work = w
			now := time.Now()
			for i := range 3 {
				c := &client{idx: i, tap: &tap{}}
				c.tap.seen.begin(now.Add(-time.Second))
				r.clients = append(r.clients, c)
			}
			a, b := &r.clients[0].tap.seen, &r.clients[1].tap.seen
			a.hold(now.Add(-500 * time.Millisecond))
			b.hold(now.Add(-100 * time.Millisecond))
			g := r.lockGraph(func() time.Time {
				tt.meanwhile(a, b, now)
				return now
			})
			var got []int
			for _, h := range g.Holders {
				got = append(got, h.Client)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("holders %v, want %v", got, tt.want)
			}
		})
	}
}
