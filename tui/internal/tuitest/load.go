package tuitest

import (
	"fmt"
	"math"
	"time"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/loadview"
)

// HerdVsFair is a load snapshot shaped like a herd-vs-fair run with 1,000
// clients half-way through the fair side: the herd finished with a few
// acquisitions per second and ~1,000 wake-ups per release, the fair lock
// running at ~2,000 acquisitions per second, one wake-up per release, a
// member killed at 0:42.
func HerdVsFair() *loadview.Snapshot {
	herdTP := make([]float64, 30)
	fairTP := make([]float64, 20)
	for i := range herdTP {
		herdTP[i] = 30 + 8*math.Sin(float64(i)/3)
	}
	for i := range fairTP {
		fairTP[i] = 2000 + 300*math.Sin(float64(i)/2)
	}
	fairTP[12] = 400 // the fault
	return &loadview.Snapshot{
		Title:    "herd-vs-fair",
		RunID:    "7f3e9c",
		Server:   "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183",
		Elapsed:  50 * time.Second,
		Duration: 60 * time.Second,
		Scenarios: []loadview.Scenario{
			{
				Name: "herd-lock", Recipe: "herd lock", State: "done", Clients: 1000, SessionsAlive: 1000,
				Ops: 912, Throughput: herdTP,
				Phases: []loadview.Phase{
					phase("acquire", 912, 480*time.Millisecond, 1900*time.Millisecond, 4200*time.Millisecond, 5100*time.Millisecond, 5300*time.Millisecond),
					phase("handoff", 911, 210*time.Millisecond, 380*time.Millisecond, 700*time.Millisecond, 910*time.Millisecond, 950*time.Millisecond),
				},
				ErrorsTotal: 3, Errors: []loadview.ErrorCount{{Kind: "connection loss", Count: 3}},
				Herd: loadview.Herd{WakeupsPerRelease: 987.4, ZKRequestsPerAcquisition: 1041, PacketsPerAcquisition: 3120},
			},
			{
				Name: "fair-lock", Recipe: "fair lock", State: "running", Started: 30 * time.Second, Clients: 1000, SessionsAlive: 998,
				Ops: 40211, Throughput: fairTP,
				Phases: []loadview.Phase{
					phase("acquire", 40211, 410*time.Millisecond, 520*time.Millisecond, 610*time.Millisecond, 1200*time.Millisecond, 1400*time.Millisecond),
					phase("handoff", 40210, 380*time.Microsecond, 900*time.Microsecond, 2100*time.Microsecond, 9*time.Millisecond, 41*time.Millisecond),
				},
				Herd: loadview.Herd{WakeupsPerRelease: 1.0, ZKRequestsPerAcquisition: 4.1, PacketsPerAcquisition: 8.2},
				Lock: Chain(1000, false),
			},
		},
		Faults:  []loadview.Fault{{At: 42 * time.Second, What: "killed member 2 (leader)"}},
		Notices: []string{"member 2 is back"},
	}
}

// Queue is a one-scenario queue run with a depth series.
func Queue() *loadview.Snapshot {
	depth := make([]float64, 40)
	tp := make([]float64, 40)
	for i := range depth {
		depth[i] = float64(20 * i % 300)
		tp[i] = 800 + float64(i%7)*10
	}
	return &loadview.Snapshot{
		Title: "queue", RunID: "a1b2c3", Server: "127.0.0.1:2181", Elapsed: 40 * time.Second, Duration: 60 * time.Second,
		Scenarios: []loadview.Scenario{{
			Name: "queue", Recipe: "queue", State: "running", Clients: 200, SessionsAlive: 200, Ops: 33000, Throughput: tp,
			Phases: []loadview.Phase{
				phase("enqueue", 16500, 2*time.Millisecond, 4*time.Millisecond, 9*time.Millisecond, 20*time.Millisecond, 31*time.Millisecond),
				phase("dequeue", 16480, 3*time.Millisecond, 6*time.Millisecond, 12*time.Millisecond, 30*time.Millisecond, 45*time.Millisecond),
				phase("end-to-end", 16480, 90*time.Millisecond, 300*time.Millisecond, 410*time.Millisecond, 500*time.Millisecond, 520*time.Millisecond),
			},
			QueueDepth: depth,
			Herd:       loadview.Herd{WakeupsPerRelease: 0, ZKRequestsPerAcquisition: 3.2},
			Violations: []string{"queue: 2 items delivered twice"},
		}},
	}
}

// phase builds a Phase with a log-normal-looking histogram between p50/4
// and max.
func phase(name string, count int64, p50, p90, p99, p999, maxd time.Duration) loadview.Phase {
	p := loadview.Phase{Name: name, Count: count, P50: p50, P90: p90, P99: p99, P999: p999, Max: maxd}
	lo := time.Microsecond
	for lo*2 < p50/4 {
		lo *= 2
	}
	for up := lo; up < 2*maxd; up *= 2 {
		x := math.Log2(float64(up) / float64(p50))
		n := int64(float64(count) * 0.4 * math.Exp(-x*x/2))
		p.Buckets = append(p.Buckets, loadview.Bucket{UpTo: up, Count: n})
	}
	return p
}

// Chain is a fair-lock chain of n contenders with sessions, endpoints and
// ages; with anomalies, waiter 3 watches the wrong node and waiter 5 none.
func Chain(n int, anomalies bool) *inspect.Lock {
	l := &inspect.Lock{Path: "/zkherd/runs/7f3e9c/fair-lock/lock-0", Layout: "curator mutex"}
	name := func(i int) string {
		return fmt.Sprintf("_c_%08x-0000-4000-8000-%012x-lock-%010d", i, i, 100+i)
	}
	for i := 0; i < n; i++ {
		e := inspect.LockEntry{
			Node: name(i), Seq: int64(100 + i), Kind: "lock", Role: inspect.RoleWaiter,
			Session:  0x1000001f3b60000 + int64(i),
			Endpoint: fmt.Sprintf("127.0.0.%d:%d", 1+i%4, 40000+i%20000),
			Age:      time.Duration(n-i) * 3 * time.Millisecond,
		}
		if i == 0 {
			e.Role = inspect.RoleHolder
		} else {
			e.Expect = name(i - 1)
			e.Watching = []string{name(i - 1)}
		}
		l.Entries = append(l.Entries, e)
	}
	if anomalies && n > 5 {
		l.Entries[3].Watching = []string{name(0)}
		l.Entries[3].Flags = l.Entries[3].Flags.With(inspect.AnomalyWrongWatch)
		l.Entries[5].Watching = nil
		l.Entries[5].Flags = l.Entries[5].Flags.With(inspect.AnomalyNoWatch)
		l.Anomalies = []inspect.Anomaly{
			{Kind: inspect.AnomalyWrongWatch, Node: name(3), Detail: "1 waiter(s) watch the wrong node: lock-0000000103 watches lock-0000000100, expected lock-0000000102"},
			{Kind: inspect.AnomalyNoWatch, Node: name(5), Detail: "1 waiter(s) watch no node of the lock, first lock-0000000105"},
		}
	}
	return l
}
