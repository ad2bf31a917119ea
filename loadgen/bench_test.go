package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble"
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
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return -1
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
		opsAtRestart           int64
		restartDone            = make(chan struct{})
	)
	b.ResetTimer()
	for range b.N {
		res, err := Run(context.Background(), run, Options{
			Servers: ens.Servers(),
			Progress: func(p Progress) {
				mu.Lock()
				defer mu.Unlock()
				if p.Elapsed/time.Second%5 == 0 {
					benchLog("%v %s: %d sessions, %d ops, %.0f/s, rss %d MiB, errors %v", p.Elapsed.Round(time.Second), p.State,
						p.SessionsAlive, p.Ops, p.Rate, procStatus("VmRSS")>>10, p.ErrorsByKind)
				}
				if p.State != "running" {
					return
				}
				// Once the locks turn over steadily (every session is up): drop
				// all connections.
				if !restarted && p.Window > 20*time.Second && p.Ops > 2000 {
					restarted, opsAtRestart = true, p.Ops
					benchLog("restarting the server at %v: rss %d MiB, %d ops", p.Elapsed.Round(time.Second), procStatus("VmRSS")>>10, p.Ops)
					go func() {
						defer close(restartDone)
						if err := ens.Kill(1); err != nil {
							restartErr = err
							return
						}
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						defer cancel()
						restartErr = ens.Restart(ctx, 1)
					}()
				}
				if restarted && !reconnected && p.SessionsAlive == run.Clients && p.Ops > opsAtRestart+2000 {
					reconnected = true
					rssAfter = procStatus("VmRSS")
					benchLog("serving again at %v: rss %d MiB, %d ops", p.Elapsed.Round(time.Second), rssAfter>>10, p.Ops)
				}
				aliveMin = min(aliveMin, p.SessionsAlive)
			},
		})
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
			b.Fatalf("the clients never worked again after the restart")
		}
		if !res.Checks.Passed {
			b.Errorf("checks failed: %v", res.Checks.Violations)
		}
		hwm := procStatus("VmHWM")
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MiB")
		b.ReportMetric(float64(rssAfter)/1024, "RSS-after-reconnect-MiB")
		b.ReportMetric(float64(res.Ops), "acquisitions")
		b.ReportMetric(res.Throughput, "acq/s")
		b.Logf("peak RSS %d MiB, RSS after reconnect %d MiB, %d acquisitions, %.0f/s, errors %v",
			hwm>>10, rssAfter>>10, res.Ops, res.Throughput, res.Metrics.Counts.ErrorsByKind)
		if hwm > 1536<<10 {
			b.Errorf("peak RSS %d MiB is over 1.5 GiB", hwm>>10)
		}
	}
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
		b.ReportMetric(float64(procStatus("VmHWM"))/1024, "peak-RSS-MiB")
		b.ReportMetric(time.Since(start).Seconds(), "wall-s")
		b.Logf("%d acquisitions in %v (%.0f/s), acquire p99 %.1f ms, checks passed %v, errors %v",
			res.Ops, res.Stop.Sub(res.WindowStart).Round(time.Millisecond), res.Throughput,
			res.Metrics.Summary("acquire").P99, res.Checks.Passed, res.Metrics.Counts.ErrorsByKind)
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
