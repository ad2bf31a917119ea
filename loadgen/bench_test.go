package loadgen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/procstat"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// The load generator's own performance (issue 4, Performance). Each
// benchmark starts its own ensemble and does one run whatever b.N is; run
// them with
//
//	go test -run '^$' -bench . -benchtime 1x -timeout 30m ./loadgen
//
// and read the custom metrics. Results are recorded in docs/BENCHMARKS.md.

// procStatus reads a field of /proc/self/status in KiB (VmRSS, VmHWM).
func procStatus(field string) int64 {
	v, err := procstat.StatusKiB(os.Getpid(), field)
	if err != nil {
		return -1
	}
	return v
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchLog streams a progress line to stderr (a benchmark's own log is
// printed only at its end).
func benchLog(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "    "+format+"\n", args...)
}

// memBreakdown says where the process's memory is, from the Go runtime's
// own accounts (runtime/metrics), to set beside its RSS: the live heap
// (as of the last GC), the heap goal, heap memory held but not in use
// (free spans not yet returned to the OS, and unused room in spans),
// goroutine stacks, the number of goroutines, the GC cycles and the GC
// workers' time (the runtime's estimate, wall time of the processors they
// held: on a busy machine it overstates their CPU; marking on otherwise
// idle processors is shown apart), and the process's CPU (getrusage).
func memBreakdown() string {
	names := []string{
		"/gc/heap/live:bytes", "/gc/heap/goal:bytes", "/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/free:bytes", "/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/stacks:bytes", "/memory/classes/total:bytes",
		"/memory/classes/heap/released:bytes", "/sched/goroutines:goroutines",
		"/gc/cycles/total:gc-cycles", "/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/total:cpu-seconds",
		"/cpu/classes/gc/mark/idle:cpu-seconds", "/gc/gomemlimit:bytes",
	}
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	mib := func(i int) uint64 { return s[i].Value.Uint64() >> 20 }
	limit := "none"
	if l := s[13].Value.Uint64(); l < 1<<62 {
		limit = fmt.Sprint(l >> 20)
	}
	return fmt.Sprintf("limit %s, live %d MiB, goal %d, objects %d, free %d, unused %d, stacks %d, released %d, runtime total %d; %d goroutines; %d GCs, GC workers %.1f s (besides %.1f s of idle-time marking), process CPU %.1f s",
		limit, mib(0), mib(1), mib(2), mib(3), mib(4), mib(5), mib(7), mib(6), s[8].Value.Uint64(),
		s[9].Value.Uint64(), s[10].Value.Float64()-s[12].Value.Float64(), s[12].Value.Float64(), cpuTime().Seconds())
}

// writeHeapProfile writes the heap profile (as of the last GC) to
// $ZKHERD_BENCH_HEAPDIR/name.pprof when that variable is set, to see what
// is live at a moment of a run (-memprofile is written after the run,
// with every session closed).
func writeHeapProfile(b *testing.B, name string) {
	dir := os.Getenv("ZKHERD_BENCH_HEAPDIR")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		b.Logf("heap profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Logf("heap profile: %v", err)
	}
}

// Peak RSS budgets of issue 13, in MiB.
const (
	tenThousandSessionsBudgetMiB    = 768  // 0.75 GiB
	fiveThousandContendersBudgetMiB = 768  // 0.75 GiB
	tenThousandContendersBudgetMiB  = 1536 // 1.5 GiB
)

// overBudget says why a peak RSS (VmHWM, KiB) is over a budget in MiB,
// "" when it is not; the benchmark fails with it (b.Error), whatever
// else went wrong in the run.
func overBudget(what string, peakKiB, budgetMiB int64) string {
	if peakKiB <= budgetMiB<<10 {
		return ""
	}
	// Rounded up, so that a figure just over the budget does not read as on it.
	return fmt.Sprintf("%s: peak RSS %d MiB is over its budget of %d MiB", what, (peakKiB+1023)>>10, budgetMiB)
}

func startBenchEnsemble(b *testing.B, heapMB int) *ensemble.Ensemble {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ens, err := ensemble.Start(ctx, ensemble.Options{Nodes: 1, NoFsync: true, HeapMB: heapMB, Dir: b.TempDir(), Logf: b.Logf})
	if err != nil {
		b.Fatalf("start ensemble: %v", err)
	}
	b.Cleanup(func() { ens.Stop() })
	return ens
}

func mustValid(b *testing.B, spec scenarios.Spec) scenarios.Run {
	b.Helper()
	if err := spec.Validate(); err != nil {
		b.Fatalf("scenario: %v", err)
	}
	return spec.Runs()[0]
}

// BenchmarkTenThousandSessions holds 10,000 sessions in this process (100
// fair locks x 100 contenders, hold 10 ms) and restarts the server once
// mid-run, so every session reconnects. It reports the peak RSS and the RSS
// after the reconnections.
func BenchmarkTenThousandSessions(b *testing.B) {
	ens := startBenchEnsemble(b, 2048)
	run := mustValid(b, scenarios.Spec{
		Name: "ten-thousand", Recipe: scenarios.FairLock,
		Clients: 10_000, Locks: 100, Duration: 90 * time.Second,
		Arrival: scenarios.Arrival{Kind: scenarios.Stampede}, RampUp: 1000,
		Hold: scenarios.FixedHold(10 * time.Millisecond), SessionTimeout: 60 * time.Second,
	})
	var (
		mu                     sync.Mutex
		restarted, reconnected bool
		restartErr             error
		rssAfter               int64
		aliveMin               = int(^uint(0) >> 1)
		rssMax                 int64
		opsAtRestart           int64
		restartDone            = make(chan struct{})
		backAt                 time.Time // when the server served again
		last                   Progress  // the last running progress
		lastAt                 time.Time // when it came
	)
	b.ResetTimer()
	for range b.N {
		res, err := Run(context.Background(), run, Options{
			Servers: ens.Servers(),
			Progress: func(p Progress) {
				mu.Lock()
				defer mu.Unlock()
				rss := procStatus("VmRSS")
				if p.Elapsed/time.Second%5 == 0 || (restarted && !reconnected) {
					benchLog("%v %s: %d sessions (%d connected), %d ops (%d since the restart), %.0f/s, %d of %d locks quiet, rss %d MiB, errors %v; %s",
						p.Elapsed.Round(time.Second), p.State, p.SessionsAlive, p.SessionsConnected, p.Ops, max(p.Ops-opsAtRestart, 0),
						p.Rate, p.LocksQuiet, run.Locks, rss>>10, p.ErrorsByKind, memBreakdown())
				}
				if rss > rssMax {
					rssMax = rss
					writeHeapProfile(b, "sessions-peak")
				}
				if p.State != "running" {
					return
				}
				last, lastAt = p, time.Now()
				// Once the locks turn over steadily (every session is up): drop
				// all connections.
				if !restarted && p.Window > 20*time.Second && p.Ops > 2000 {
					restarted, opsAtRestart = true, p.Ops
					benchLog("restarting the server at %v: rss %d MiB, %d ops; %s", p.Elapsed.Round(time.Second), rss>>10, p.Ops, memBreakdown())
					writeHeapProfile(b, "sessions-before-kill")
					go func() {
						defer close(restartDone)
						if err := ens.Kill(1); err != nil {
							restartErr = err
							return
						}
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						defer cancel()
						restartErr = ens.Restart(ctx, 1)
						mu.Lock()
						backAt = time.Now()
						mu.Unlock()
					}()
				}
				// Served again: the server is back, every session is
				// connected to it again (alive is not enough: a session
				// whose connection is down is still alive) and the locks
				// turn over.
				if restarted && !reconnected && !backAt.IsZero() && p.SessionsConnected == run.Clients && p.Ops > opsAtRestart+2000 {
					reconnected = true
					rssAfter = procStatus("VmRSS")
					benchLog("serving again at %v (%v after the server came back): rss %d MiB, %d ops; %s", p.Elapsed.Round(time.Second),
						time.Since(backAt).Round(time.Second), rssAfter>>10, p.Ops, memBreakdown())
					writeHeapProfile(b, "sessions-after-reconnect")
				}
				aliveMin = min(aliveMin, p.SessionsAlive)
			},
		})
		// The peak RSS is checked whatever else failed: a run that did not
		// finish may still have gone over the budget.
		hwm := procStatus("VmHWM")
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MiB")
		b.Logf("peak RSS %d MiB (budget %d); %s", hwm>>10, tenThousandSessionsBudgetMiB, memBreakdown())
		if msg := overBudget("10,000 sessions", hwm, tenThousandSessionsBudgetMiB); msg != "" {
			b.Error(msg)
		}
		if err != nil {
			b.Fatalf("Run: %v", err)
		}
		if !restarted {
			b.Fatalf("the server was never restarted")
		}
		<-restartDone
		if restartErr != nil {
			b.Fatalf("restart: %v", restartErr)
		}
		if !reconnected {
			sinceBack := time.Duration(-1)
			if !backAt.IsZero() {
				sinceBack = lastAt.Sub(backAt)
			}
			b.Fatalf("%s", notServingAgain(last, run, opsAtRestart, sinceBack))
		}
		if !res.Checks.Passed {
			b.Errorf("checks failed: %v", res.Checks.Violations)
		}
		b.ReportMetric(float64(rssAfter)/1024, "RSS-after-reconnect-MiB")
		b.ReportMetric(float64(res.Ops), "acquisitions")
		b.ReportMetric(res.Throughput, "acq/s")
		b.Logf("peak RSS %d MiB, RSS after reconnect %d MiB, %d acquisitions, %.0f/s, errors %v",
			hwm>>10, rssAfter>>10, res.Ops, res.Throughput, res.Metrics.Counts.ErrorsByKind)
	}
}

// notServingAgain says what a run whose clients did not serve again after
// the server's restart saw at its last progress (sinceBack after the
// server came back, negative if it never did): whether sessions were still
// reconnecting when the window ended, or all were connected and the locks
// stood still (a liveness bug).
func notServingAgain(p Progress, run scenarios.Run, opsAtRestart int64, sinceBack time.Duration) string {
	back := "the server never came back"
	if sinceBack >= 0 {
		back = fmt.Sprintf("%v after the server came back", sinceBack.Round(time.Second))
	}
	msg := fmt.Sprintf("the clients did not serve again after the restart: at the window's end (%s) %d of %d sessions were connected (%d alive), %d acquisitions since the restart, %d of %d locks had no release in the last %v",
		back, p.SessionsConnected, run.Clients, p.SessionsAlive, max(p.Ops-opsAtRestart, 0), p.LocksQuiet, run.Locks, QuietLock)
	switch {
	case p.SessionsConnected < run.Clients:
		return msg + fmt.Sprintf("; sessions were still reconnecting (a fair lock stands still while a session queued on it is disconnected, until it reconnects or its %v session timeout expires it)", run.SessionTimeout)
	case p.Lock != nil:
		return msg + fmt.Sprintf("; every session was connected but the locks stood still: a liveness bug; at %s: %d holders %v, %d waiters, first %v",
			p.Lock.ShortPath(p.Lock.Path), len(p.Lock.Holders), p.Lock.Holders, p.Lock.WaitersTotal, p.Lock.Waiters)
	}
	return msg + "; every session was connected but the locks stood still: a liveness bug"
}

// BenchmarkFiveThousandContenders runs 5,000 contenders on one fair lock,
// hold 0, for 10,000 acquisitions: it must complete with every check passing.
func BenchmarkFiveThousandContenders(b *testing.B) {
	ens := startBenchEnsemble(b, 2048)
	run := mustValid(b, scenarios.Spec{
		Name: "five-thousand", Recipe: scenarios.FairLock,
		Clients: 5_000, Ops: 10_000,
		Arrival: scenarios.Arrival{Kind: scenarios.Stampede}, RampUp: 1000,
		Hold: scenarios.FixedHold(0), SessionTimeout: 30 * time.Second,
	})
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := Run(context.Background(), run, Options{Servers: ens.Servers()})
		if err != nil {
			b.Fatalf("Run: %v", err)
		}
		if !res.Checks.Passed {
			b.Errorf("checks failed: %v", res.Checks.Violations)
		}
		if res.Ops != int64(run.Ops) {
			b.Errorf("acquisitions = %d, want %d", res.Ops, run.Ops)
		}
		b.ReportMetric(float64(res.Ops), "acquisitions")
		b.ReportMetric(res.Throughput, "acq/s")
		hwm := procStatus("VmHWM")
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MiB")
		b.ReportMetric(time.Since(start).Seconds(), "wall-s")
		if msg := overBudget("5,000 contenders", hwm, fiveThousandContendersBudgetMiB); msg != "" {
			b.Error(msg)
		}
		b.Logf("%d acquisitions in %v (%.0f/s), acquire p99 %.1f ms, checks passed %v, errors %v; peak RSS %d MiB; %s",
			res.Ops, res.Stop.Sub(res.WindowStart).Round(time.Millisecond), res.Throughput,
			res.Metrics.Summary("acquire").P99, res.Checks.Passed, res.Metrics.Counts.ErrorsByKind, hwm>>10, memBreakdown())
		logRunDetail(b, res)
	}
}

// BenchmarkGeneratorCPU measures the generator's CPU time (user plus
// system, getrusage) per acquisition with 1,000 contenders on one fair
// lock, in the steady state: with no hold time (the generator as busy as
// the server lets it be; checked against the 1 ms budget) and with the
// demo's 1 ms (reported).
func BenchmarkGeneratorCPU(b *testing.B) {
	ens := startBenchEnsemble(b, 512)
	for _, hold := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprintf("hold=%v", hold), func(b *testing.B) {
			run := mustValid(b, scenarios.Spec{
				Name: "cpu", Recipe: scenarios.FairLock,
				Clients: 1_000, Duration: 20 * time.Second,
				Arrival: scenarios.Arrival{Kind: scenarios.Stampede}, RampUp: 500,
				Hold: scenarios.FixedHold(hold), SessionTimeout: 20 * time.Second,
			})
			for range b.N {
				benchCPU(b, ens, run, hold == 0)
			}
		})
	}
}

// benchCPU does one run and reports the CPU per acquisition; enforce
// checks it against the 1 ms budget. With a hold time the generator idles
// between grants and the scheduler's sleep/wake churn (futex, spinning)
// adds a load-dependent share, so that case is reported, not enforced.
func benchCPU(b *testing.B, ens *ensemble.Ensemble, run scenarios.Run, enforce bool) {
	var (
		mu         sync.Mutex
		cpu0, cpu1 time.Duration
		ops0, ops1 int64
		measured   bool
	)
	res, err := Run(context.Background(), run, Options{
		Servers: ens.Servers(),
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			// The steady state: from 5 s into the window (the stampede's
			// creates and first listings done) to the last report before it
			// closed.
			if p.State != "running" || p.Window < 5*time.Second {
				return
			}
			if !measured {
				measured, cpu0, ops0 = true, cpuTime(), p.Ops
			}
			cpu1, ops1 = cpuTime(), p.Ops
		},
	})
	if err != nil {
		b.Fatalf("Run: %v", err)
	}
	if !res.Checks.Passed {
		b.Errorf("checks failed: %v", res.Checks.Violations)
	}
	ops := ops1 - ops0
	perAcq := (cpu1 - cpu0) / time.Duration(max(ops, 1))
	b.ReportMetric(float64(perAcq.Microseconds())/1000, "cpu-ms/acq")
	b.ReportMetric(float64(ops)/max((cpu1-cpu0).Seconds(), 1e-9)/1000, "kacq/cpu-s")
	b.ReportMetric(res.Throughput, "acq/s")
	b.Logf("%d acquisitions measured, CPU %v, %v per acquisition, %.0f acq/s", ops, (cpu1 - cpu0).Round(time.Millisecond), perAcq, res.Throughput)
	if enforce && perAcq > time.Millisecond {
		b.Errorf("generator CPU %v per acquisition, want at most 1ms", perAcq)
	}
}

// BenchmarkTenThousandContenders runs 10,000 contenders on one fair lock,
// hold 0, each its own session, in this process (issue 13): zkherd's Lock
// for 20,000 acquisitions, then go-zookeeper's zk.Lock on the same
// scenario. zkherd must complete with every check passing, a peak RSS of
// at most 1.5 GiB and at least 400 acquisitions/s. zk.Lock is reported
// beside it; when it cannot complete (its process passes goZookeeperRSSCap,
// or goZookeeperWindow passes first) the log says how it failed.
//
//	go test -run '^$' -bench TenThousandContenders -benchtime 1x -timeout 30m ./loadgen
func BenchmarkTenThousandContenders(b *testing.B) {
	ens := startBenchEnsemble(b, 2048)
	spec := scenarios.Spec{
		Name: "ten-thousand-contenders", Recipe: scenarios.FairLock,
		Clients: 10_000, Ops: 20_000,
		Arrival: scenarios.Arrival{Kind: scenarios.Stampede}, RampUp: 1000,
		Hold: scenarios.FixedHold(0), SessionTimeout: 60 * time.Second,
	}
	run := mustValid(b, spec)
	b.ResetTimer()
	for range b.N {
		benchLog("zkherd: %d contenders, %d acquisitions", run.Clients, run.Ops)
		zh := contendersRun(b, ens, run, nil, 0)
		if zh.err != nil {
			b.Fatalf("zkherd: %v", zh.err)
		}
		res := zh.res
		if !res.Checks.Passed {
			b.Errorf("zkherd checks failed: %v", res.Checks.Violations)
		}
		if res.Ops != int64(run.Ops) {
			b.Errorf("zkherd acquisitions = %d, want %d", res.Ops, run.Ops)
		}
		b.ReportMetric(res.Throughput, "acq/s")
		b.ReportMetric(float64(zh.peakKiB)/1024, "peak-RSS-MiB")
		b.ReportMetric(zh.wall.Seconds(), "wall-s")
		b.Logf("zkherd: %d acquisitions in %v (%.0f/s), peak RSS %d MiB, acquire p99 %.1f s, checks passed %v, errors %v",
			res.Ops, res.Stop.Sub(res.WindowStart).Round(time.Millisecond), res.Throughput, zh.peakKiB>>10,
			res.Metrics.Summary("acquire").P99/1000, res.Checks.Passed, res.Metrics.Counts.ErrorsByKind)
		logRunDetail(b, res)
		if msg := overBudget("zkherd, 10,000 contenders", zh.peakKiB, tenThousandContendersBudgetMiB); msg != "" {
			b.Error(msg)
		}
		if res.Throughput < 400 {
			b.Errorf("zkherd %.0f acquisitions/s, want at least 400", res.Throughput)
		}

		// go-zookeeper's zk.Lock, same scenario, same process. Its sessions
		// get buffers sized for its listings (it lists the directory after
		// each create and each wake-up), as any go-zookeeper user's must.
		benchLog("go-zookeeper zk.Lock: %d contenders, %d acquisitions", run.Clients, run.Ops)
		debug.FreeOSMemory()
		gz := contendersRun(b, ens, run, newGoZookeeperLocker, goZookeeperWindow)
		b.ReportMetric(float64(gz.peakKiB)/1024, "gozk-peak-RSS-MiB")
		if gz.res != nil {
			b.ReportMetric(float64(gz.res.Ops), "gozk-acquisitions")
			b.ReportMetric(gz.res.Throughput, "gozk-acq/s")
		}
		b.Logf("go-zookeeper zk.Lock: %s", gz.describe(run))
	}
}

// logRunDetail logs what explains a run's throughput: acquisitions per
// second of the window, the requests by kind, and the generator's load.
func logRunDetail(b *testing.B, res *Result) {
	var tl []string
	for _, iv := range res.Metrics.Intervals {
		if !iv.End.Before(res.WindowStart) {
			tl = append(tl, strconv.Itoa(int(float64(iv.Counts.Ops)/max(iv.Seconds(), 1e-9))))
		}
	}
	b.Logf("acquisitions/s per second of the window: %s", strings.Join(tl, " "))
	b.Logf("requests %v; wake-ups per release %.2f; generator CPU %.0f%%, scheduling p99 %v, behind in %d of %d intervals",
		res.Requests, figures.Get(res.Totals, figures.WakeupsPerRelease), 100*res.Generator.CPUShare, res.Generator.SchedP99,
		res.Generator.IntervalsBehind, res.Generator.Intervals)
}

// goZookeeperRSSCap and goZookeeperWindow bound zk.Lock's run: the machine
// is shared, and a run that needs more is reported as not completing.
const (
	goZookeeperRSSCap = 6 << 30
	goZookeeperWindow = 5 * time.Minute
)

// contendersResult is one run of BenchmarkTenThousandContenders.
type contendersResult struct {
	res     *Result
	err     error
	peakKiB int64         // VmHWM over this run only
	wall    time.Duration // from Run's start to its return
	capped  string        // why the run was cut short, "" if it was not
}

// describe says how a run went, or how it failed.
func (c contendersResult) describe(run scenarios.Run) string {
	switch {
	case c.err != nil && c.capped != "":
		return fmt.Sprintf("did not complete: %s, and stopping it failed: %v (peak RSS %d MiB)", c.capped, c.err, c.peakKiB>>10)
	case c.err != nil:
		return fmt.Sprintf("did not complete: %v (peak RSS %d MiB)", c.err, c.peakKiB>>10)
	case c.capped != "":
		return fmt.Sprintf("did not complete: %s; %d of %d acquisitions, errors %v, peak RSS %d MiB",
			c.capped, c.res.Ops, run.Ops, c.res.Metrics.Counts.ErrorsByKind, c.peakKiB>>10)
	case c.res.Ops < int64(run.Ops):
		return fmt.Sprintf("did not complete: %d of %d acquisitions, errors %v, peak RSS %d MiB",
			c.res.Ops, run.Ops, c.res.Metrics.Counts.ErrorsByKind, c.peakKiB>>10)
	}
	return fmt.Sprintf("%d acquisitions in %v (%.0f/s), peak RSS %d MiB, checks passed %v, errors %v",
		c.res.Ops, c.res.Stop.Sub(c.res.WindowStart).Round(time.Millisecond), c.res.Throughput, c.peakKiB>>10,
		c.res.Checks.Passed, c.res.Metrics.Counts.ErrorsByKind)
}

// contendersRun does one run with the peak RSS counted from its start;
// newLocker replaces the fair Lock when set; window > 0 cuts the run short
// (as a failure) after that long or once the process passes
// goZookeeperRSSCap.
func contendersRun(b *testing.B, ens *ensemble.Ensemble, run scenarios.Run, newLocker func(*recipes.Session, string) recipes.Locker, window time.Duration) contendersResult {
	resetPeakRSS(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu     sync.Mutex
		capped string
	)
	start := time.Now()
	res, err := Run(ctx, run, Options{
		Servers:   ens.Servers(),
		NewLocker: newLocker,
		Progress: func(p Progress) {
			rss := procStatus("VmRSS") << 10
			if p.Elapsed/time.Second%5 == 0 {
				benchLog("%v %s: %d sessions, %d ops, %.0f/s, rss %d MiB, errors %v", p.Elapsed.Round(time.Second), p.State,
					p.SessionsAlive, p.Ops, p.Rate, rss>>20, p.ErrorsByKind)
			}
			if window <= 0 {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case capped != "":
			case rss > goZookeeperRSSCap:
				capped = fmt.Sprintf("the process passed %d GiB of RSS after %v", goZookeeperRSSCap>>30, p.Elapsed.Round(time.Second))
				cancel()
			case p.Window > window:
				capped = fmt.Sprintf("not done %v into the window", window)
				cancel()
			}
		},
	})
	mu.Lock()
	defer mu.Unlock()
	return contendersResult{res: res, err: err, peakKiB: procStatus("VmHWM"), wall: time.Since(start), capped: capped}
}

// resetPeakRSS resets the process's VmHWM to its current RSS (Linux
// /proc/self/clear_refs), so that two runs in one process are measured
// apart.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("reset the peak RSS: %v", err)
	}
}

// goZookeeperLocker drives go-zookeeper's zk.Lock as a recipes.Locker.
// zk.Lock takes no context: when ctx ends during Lock (the run stops), the
// session is closed, which ends the wait and removes its node.
type goZookeeperLocker struct {
	s    *recipes.Session
	l    *zk.Lock
	lost chan struct{}
}

func newGoZookeeperLocker(s *recipes.Session, path string) recipes.Locker {
	return &goZookeeperLocker{s: s, l: zk.NewLock(s.Conn(), path, zk.WorldACL(zk.PermAll)), lost: make(chan struct{})}
}

func (g *goZookeeperLocker) Lock(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- g.l.Lock() }()
	select {
	case err := <-done:
		if err == nil {
			g.lost = make(chan struct{})
		} else if ctx.Err() != nil {
			return ctx.Err() // the run stopped and closed the session
		}
		return err
	case <-ctx.Done():
		g.s.Close()
		<-done
		return ctx.Err()
	}
}

func (g *goZookeeperLocker) TryLock(context.Context) error {
	return errors.New("zk.Lock has no TryLock")
}

func (g *goZookeeperLocker) Unlock(context.Context) error {
	err := g.l.Unlock()
	close(g.lost)
	return err
}

func (g *goZookeeperLocker) Lost() <-chan struct{} { return g.lost }

// FencingToken is the node's sequence plus one (zk.Lock has none).
func (g *goZookeeperLocker) FencingToken() uint64 { return uint64(seqOf(g.Node()) + 1) }

// Node reads zk.Lock's unexported lockPath (it has no accessor) for the
// FIFO and fencing checks.
func (g *goZookeeperLocker) Node() string {
	return reflect.ValueOf(g.l).Elem().FieldByName("lockPath").String()
}

// BenchmarkHerdFiveThousand runs the two herd locks with 5,000 contenders
// on one lock, hold 0, for a 30 s window: every release wakes every
// waiter. It reports the throughput, the wake-ups per release, the peak
// RSS and whether the generator kept up with the storm it provokes
// (Result.Generator; the run's notes say so when it did not).
//
//	go test -run '^$' -bench HerdFiveThousand -benchtime 1x -timeout 30m ./loadgen
func BenchmarkHerdFiveThousand(b *testing.B) {
	ens := startBenchEnsemble(b, 2048)
	for _, recipe := range []scenarios.Recipe{scenarios.HerdLock, scenarios.HerdChildren} {
		b.Run(string(recipe), func(b *testing.B) {
			run := mustValid(b, scenarios.Spec{
				Name: "herd-five-thousand", Recipe: recipe,
				Clients: 5_000, Duration: 30 * time.Second,
				Arrival: scenarios.Arrival{Kind: scenarios.Stampede}, RampUp: 1000,
				Hold: scenarios.FixedHold(0), SessionTimeout: 60 * time.Second,
			})
			for range b.N {
				debug.FreeOSMemory()
				r := contendersRun(b, ens, run, nil, 0)
				if r.err != nil {
					b.Fatalf("Run: %v", r.err)
				}
				res := r.res
				if !res.Checks.Passed {
					b.Errorf("checks failed: %v", res.Checks.Violations)
				}
				behind := 0.0
				if res.Generator.Behind {
					behind = 1
				}
				b.ReportMetric(res.Throughput, "acq/s")
				b.ReportMetric(figures.Get(res.Totals, figures.WakeupsPerRelease), "wakeups/release")
				b.ReportMetric(float64(r.peakKiB)/1024, "peak-RSS-MiB")
				b.ReportMetric(behind, "generator-behind")
				b.Logf("%s: %d acquisitions in %v (%.1f/s), %.0f wake-ups per release, peak RSS %d MiB, checks passed %v, errors %v, notes %q",
					recipe, res.Ops, res.Stop.Sub(res.WindowStart).Round(time.Millisecond), res.Throughput, figures.Get(res.Totals, figures.WakeupsPerRelease),
					r.peakKiB>>10, res.Checks.Passed, res.Metrics.Counts.ErrorsByKind, res.Notes)
				logRunDetail(b, res)
			}
		})
	}
}
