package loadgen

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/format"
)

// Whether the load generator keeps up with the work it provokes. A herd
// lock's release wakes every waiter at once: with 5,000 of them in this
// process, 5,000 goroutines become runnable together, each with a reply to
// decode and two requests to send. When the process cannot run them as
// fast as the server answers, the wake-up and hand-off latencies measured
// include time spent waiting for a CPU here, and the throughput is the
// generator's limit, not the server's. The run says so (a note, and
// Result.Generator) instead of reporting such figures as the server's.

// Generator is how busy the load generator was during a run's window.
type Generator struct {
	// CPUShare is the process's CPU time (user + system) over the window's
	// wall time, divided by the CPUs it may use (GOMAXPROCS): 1 means
	// every CPU was busy all the time.
	CPUShare float64
	// SchedP99 is the 99th percentile of the time goroutines waited,
	// runnable, for a CPU during the window (runtime/metrics
	// /sched/latencies:seconds).
	SchedP99 time.Duration
	// Intervals counts the metrics intervals of the window (after the
	// first, partial one), IntervalsBehind those in which the generator
	// fell behind: scheduling p99 above BehindSchedP99, or CPU share above
	// BehindCPUShare, over that interval.
	Intervals, IntervalsBehind int
	// Behind is set when the generator fell behind in at least a quarter
	// of the intervals: a stampede's first second alone does not count.
	Behind bool
}

// The thresholds above which the generator is said to fall behind. A
// goroutine woken by a reply or a notification normally runs within
// microseconds; tens of milliseconds of queueing for a CPU distort the
// milliseconds the run measures.
const (
	BehindSchedP99 = 10 * time.Millisecond
	BehindCPUShare = 0.9
)

const schedLatencies = "/sched/latencies:seconds"

// selfLoad is a reading taken when the window opens.
type selfLoad struct {
	at    time.Time
	cpu   time.Duration
	sched metrics.Float64Histogram
}

func readSelfLoad() selfLoad {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	l := selfLoad{at: time.Now(), cpu: processCPU()}
	if s[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := s[0].Value.Float64Histogram()
		l.sched = metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
	}
	return l
}

// to measures the generator from reading l to reading now.
func (l selfLoad) to(now selfLoad) (cpuShare float64, schedP99 time.Duration) {
	if wall := now.at.Sub(l.at); wall > 0 {
		cpuShare = float64(now.cpu-l.cpu) / float64(wall) / float64(runtime.GOMAXPROCS(0))
	}
	return cpuShare, histQuantile(l.sched, now.sched, 0.99)
}

func behind(cpuShare float64, schedP99 time.Duration) bool {
	return schedP99 > BehindSchedP99 || cpuShare > BehindCPUShare
}

// selfWatch follows the generator's load interval by interval; the
// ticker's.
type selfWatch struct {
	window            selfLoad // when the window opened
	last              selfLoad
	started           bool
	intervals, behind int
}

// tick ends an interval of the window.
func (w *selfWatch) tick() {
	now := readSelfLoad()
	if w.started {
		w.intervals++
		if behind(w.last.to(now)) {
			w.behind++
		}
	}
	w.last, w.started = now, true
}

// result sums the window up to its stop.
func (w *selfWatch) result(stop selfLoad) Generator {
	var g Generator
	g.CPUShare, g.SchedP99 = w.window.to(stop)
	g.Intervals, g.IntervalsBehind = w.intervals, w.behind
	g.Behind = w.behind > 0 && 4*w.behind >= w.intervals
	return g
}

// note is the line a run's result carries when the generator fell behind.
// Goroutines that wait for a CPU while the process uses little of its
// CPUs were kept waiting by other programs on the machine, not by the
// run's own work, and the fix differs.
func (g Generator) note(name func(input string) string) string {
	what := fmt.Sprintf("the load generator fell behind in %d of %d intervals (whole window: goroutines waited %s (p99) for a CPU, %.0f%% of its %d CPUs busy)",
		g.IntervalsBehind, g.Intervals, format.Duration(g.SchedP99), 100*g.CPUShare, runtime.GOMAXPROCS(0))
	if g.CPUShare < BehindCPUShare/2 {
		return what + "; the machine's CPUs were busy with other programs: latencies include that wait; run on a quieter machine"
	}
	return what + "; latencies include that wait and the throughput may be this process's limit, not the server's: " +
		exit.Advice(name, "spread the clients over processes ({processes}) or run fewer")
}

// histQuantile is the q-quantile of the counts added between two readings
// of one cumulative histogram (the upper edge of its bucket).
func histQuantile(before, after metrics.Float64Histogram, q float64) time.Duration {
	if len(after.Counts) == 0 || len(before.Counts) != len(after.Counts) {
		return 0
	}
	var total uint64
	for i := range after.Counts {
		total += after.Counts[i] - before.Counts[i]
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i := range after.Counts {
		seen += after.Counts[i] - before.Counts[i]
		if seen >= want {
			edge := after.Buckets[i+1]
			if math.IsInf(edge, 1) {
				edge = after.Buckets[i]
			}
			return time.Duration(edge * float64(time.Second))
		}
	}
	return 0
}

// processCPU is the process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
