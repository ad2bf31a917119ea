package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/procstat"
)

// BenchmarkInspectorCost builds a production-sized state on a 1-node server
// (about 205,000 znodes, 2,000 sessions, 100,000 data watches, 4,000
// ephemeral registrations in 1,000 directories, a directory of 10,000
// children, 20 lock directories) and runs "zkherd inspect" on its Locks view
// in alternating windows, off and on, while other clients set data at a
// steady rate. It reports the server's CPU (from /proc/<jvm pid>/stat) and
// the writers' setData p99 with the inspector on over off, the time to
// the first Locks screen (first_locks_s: from Enter on the command line to a
// screen listing a lock directory, the slowest of the inspector's starts),
// the requests the inspector sent per second, and its RSS at the start and
// end of each window; each pair of windows (worst_pair_*), and the "off"
// windows against each other (worst_off_off_p99: the measure's own noise, no
// inspector in either).
//
//	go test -run '^$' -bench InspectorCost -benchtime 1x -timeout 60m ./e2e/
//
// ZKHERD_BENCH_WINDOW (default 60s) sets each window's length,
// ZKHERD_BENCH_PAIRS (default 3) the number of off/on pairs (taken in ABBA
// order, after ZKHERD_BENCH_SETTLE, default 30s, of the writers alone), and
// ZKHERD_BENCH_LAST_ON (default: the window) the length of the last
// inspector window, for the long RSS check; ZKHERD_BENCH_ARGS adds flags to
// zkherd inspect (e.g. "--watch-budget -1"); ZKHERD_BENCH_BIN runs a
// zkherd binary built beforehand instead of building this tree;
// ZKHERD_BENCH_HEADLESS=1 measures the headless exporter, scraped every
// second, in place of the Locks view; ZKHERD_BENCH_SEARCH is a search the
// inspector runs through every "on" window after its first Locks screen,
// typed as a user would (e.g. "find key-999" or "grep nomatch": the whole
// tree, at the walk's budget beside the walk), before going back to the
// Locks view.
//
// The load and the inspector's age (a p99 of a sub-millisecond setData at
// 200 a second rests on 120 writes a minute, and two "off" windows of 60 s
// differed by up to 1.31x): ZKHERD_BENCH_RATE (default 200) is the
// writers' setData a second in all, ZKHERD_BENCH_WRITERS (default 1) the
// sessions sharing it, each with its own pace. ZKHERD_BENCH_WARMUP (default
// 0: each "on" window is its inspector's first minutes, start and first
// walk included) starts the inspector that long before its "on" windows
// and keeps it through the "on" windows that follow one another (ABBA
// puts them in twos); "scan" waits until the headless exporter says its
// first walk of the tree ended (zkherd_inspector_scan_complete, at most
// 30 minutes). The warm-up is measured as a window of its own, printed
// with its p99 against the "off" window before it (warmup_p99_on/off),
// never in the pairs: the pairs say what a running inspector costs, the
// warm-up what its start and first walk cost. ZKHERD_BENCH_WRITES_LOG, a
// directory, gets every window's writes (start in Unix nanoseconds and
// latency in nanoseconds, one a line) to set beside the inspector's or the
// server's own logs.
func BenchmarkInspectorCost(b *testing.B) {
	var err error
	window := envDuration(b, "ZKHERD_BENCH_WINDOW", 60*time.Second)
	lastOn := envDuration(b, "ZKHERD_BENCH_LAST_ON", window)
	pairs := envInt(b, "ZKHERD_BENCH_PAIRS", 3)
	rate := envInt(b, "ZKHERD_BENCH_RATE", 200)
	writers := envInt(b, "ZKHERD_BENCH_WRITERS", 1)
	var warmup time.Duration
	warmScan := os.Getenv("ZKHERD_BENCH_WARMUP") == "scan"
	if !warmScan {
		warmup = envDuration(b, "ZKHERD_BENCH_WARMUP", 0)
	}
	writesLog := os.Getenv("ZKHERD_BENCH_WRITES_LOG")
	bin := os.Getenv("ZKHERD_BENCH_BIN") // a binary built beforehand, else this tree's
	if bin == "" {
		bin = zkherdBin(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 115*time.Minute)
	defer cancel()
	ens, err := ensemble.Start(ctx, ensemble.Options{Nodes: 1, NoFsync: true, HeapMB: 1536, Dir: b.TempDir(), Logf: b.Logf})
	if err != nil {
		b.Fatal(err)
	}
	defer ens.Stop()
	server := ens.ConnectString()
	jvm := ens.Members()[0].PID

	start := time.Now()
	st := buildProductionState(ctx, b, ens.Servers())
	defer st.close()
	fmt.Fprintf(os.Stderr, "state built in %s: %s", time.Since(start).Round(time.Second), mntrSummary(ctx, server))
	fmt.Fprintln(os.Stderr)

	w := startWriters(ctx, ens.Servers(), writers, rate)
	defer w.stop()

	extra := os.Getenv("ZKHERD_BENCH_ARGS")
	// ZKHERD_BENCH_HEADLESS=1 measures "zkherd inspect --headless" instead,
	// scraped every second as a Prometheus would (harsher than the usual
	// 15 s): first_locks_s is then the time to a scrape with a lock's
	// waiters.
	headless := os.Getenv("ZKHERD_BENCH_HEADLESS") == "1"
	if warmScan && !headless {
		b.Fatal("ZKHERD_BENCH_WARMUP=scan needs ZKHERD_BENCH_HEADLESS=1 (the terminal's walk waits while a search runs): give a duration")
	}
	search := os.Getenv("ZKHERD_BENCH_SEARCH")

	type result struct {
		index            int // the window's number; a warm-up has the number of the "on" window it precedes
		on, warm         bool
		cpu              float64 // server cores
		inspectorCPU     float64 // the inspector's cores
		p99, p50         time.Duration
		writes           int
		lat              []time.Duration // every write's latency, for the pooled figures
		reqPerSec        float64
		rssStart, rssEnd int64 // KiB
		rssSamples       []int64
		length           time.Duration
	}
	// One inspector, running through the "on" windows that follow each
	// other (with a warm-up), or each "on" window's own (without).
	type inspector struct {
		pid          int
		term         *tmuxScreen // the terminal; nil for the headless exporter
		stopHeadless func()
		scanDone     func() bool
		firstLocks   time.Duration
		lockDirs     string
	}
	var firstMax time.Duration
	startInspector := func(i int) *inspector {
		in := &inspector{}
		if headless {
			in.pid, in.firstLocks, in.lockDirs, in.scanDone, in.stopHeadless = startHeadlessExporter(b, bin, server, extra)
			firstMax = max(firstMax, in.firstLocks)
			return in
		}
		// The terminal is ready first (a shell waiting for Enter), so
		// that the time to the first Locks screen counts zkherd's
		// start, not tmux's.
		term := newTmuxScreen(b, 120, 40, "read go; exec "+bin+" inspect --server "+server+" "+extra)
		in.term = term
		launched := time.Now()
		term.keys("Enter")
		term.keys("2")
		re := regexp.MustCompile(`Locks\s+(\d+) lock director`)
		for time.Since(launched) < 60*time.Second {
			screen := term.screen()
			if m := re.FindStringSubmatch(screen); m != nil && m[1] != "0" {
				in.firstLocks = time.Since(launched)
				in.lockDirs = m[1]
				if firstMax == 0 {
					fmt.Fprintf(os.Stderr, "first Locks screen before window %d, after %s:\n%s\n", i, in.firstLocks.Round(time.Millisecond), screen)
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if in.firstLocks == 0 {
			screen := term.screen()
			b.Errorf("window %d: no Locks screen with a lock directory within 60 s:\n%s", i, screen)
		}
		firstMax = max(firstMax, in.firstLocks)
		if search != "" {
			term.keys(":")
			term.text(search)
			term.keys("Enter")
			for t := time.Now(); time.Since(t) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
				if strings.Contains(term.screen(), "searching…") {
					break
				}
			}
			term.keys("2")
		}
		in.pid = term.pid()
		return in
	}
	stopInspector := func(in *inspector, i int) {
		if in.stopHeadless != nil {
			in.stopHeadless()
			return
		}
		screen := in.term.screen()
		fmt.Fprintf(os.Stderr, "inspector screen at the end of window %d:\n%s\n", i, screen)
		if search != "" {
			// How far the search got: the Search view's first line.
			in.term.keys(":")
			in.term.text("search")
			in.term.keys("Enter")
			time.Sleep(500 * time.Millisecond)
			screen := in.term.screen()
			for _, line := range strings.Split(screen, "\n") {
				if strings.HasPrefix(line, "Search  find ") || strings.HasPrefix(line, "Search  grep ") {
					fmt.Fprintf(os.Stderr, "  window %d search: %s\n", i, strings.TrimSpace(line))
				}
			}
		}
		in.term.close()
	}
	// measure runs one window of length (or, with until, until it says so
	// or length passes) and measures it; in is the inspector running
	// through it, nil in an "off" window.
	measure := func(i int, in *inspector, warm bool, length time.Duration, until func() bool) result {
		r := result{index: i, on: in != nil, warm: warm}
		cpu0, pk0, t0 := procCPU(b, jvm), packets(ctx, server), time.Now()
		var icpu0 float64
		if in != nil {
			r.rssStart = rssKiB(in.pid)
			icpu0 = procCPU(b, in.pid)
		}
		w.reset()
		sampleEvery := max(length/10, 5*time.Second)
		if until != nil {
			sampleEvery = 30 * time.Second
		}
		for end := t0.Add(length); time.Now().Before(end); {
			time.Sleep(min(sampleEvery, time.Until(end)))
			if in != nil {
				r.rssSamples = append(r.rssSamples, rssKiB(in.pid))
			}
			if until != nil && until() {
				break
			}
		}
		r.length = time.Since(t0)
		elapsed := r.length.Seconds()
		r.cpu = (procCPU(b, jvm) - cpu0) / elapsed
		r.reqPerSec = float64(packets(ctx, server)-pk0) / elapsed
		r.lat, r.p50, r.p99 = w.percentiles()
		r.writes = len(r.lat)
		if in != nil {
			r.inspectorCPU = (procCPU(b, in.pid) - icpu0) / elapsed
			r.rssEnd = rssKiB(in.pid)
		}
		what := map[bool]string{false: "window", true: "warm-up before window"}[warm]
		fmt.Fprintf(os.Stderr, "%s %d inspector=%v (%.3f cores) %s: server %.3f cores, %.0f req/s, setData p50 %s p99 %s (%d writes), RSS %d -> %d KiB %v",
			what, i, r.on, r.inspectorCPU, r.length.Round(time.Second), r.cpu, r.reqPerSec, r.p50, r.p99, r.writes, r.rssStart, r.rssEnd, r.rssSamples)
		fmt.Fprintln(os.Stderr)
		fmt.Fprintf(os.Stderr, "  slowest 1%% of writes by second of the window (from %s UTC): %s\n", t0.UTC().Format("15:04:05.000"), w.slowest(t0))
		if writesLog != "" {
			name := fmt.Sprintf("window-%02d-%s.txt", i, map[bool]string{false: "off", true: "on"}[r.on])
			if warm {
				name = fmt.Sprintf("window-%02d-warmup.txt", i)
			}
			if err := w.write(filepath.Join(writesLog, name)); err != nil {
				b.Error(err)
			}
		}
		return r
	}
	// The windows alternate in ABBA order (off on, on off, off on, ...),
	// so that a drift in the machine's or the server's speed over the run
	// (a heap filling, a neighbour's load) hits both sides alike; the
	// longest "on" window is the last one, for the RSS check.
	onAt := func(i int) bool { return (i%2 == 1) == ((i/2)%2 == 0) }
	lastOnIdx := 0
	for i := range 2 * pairs {
		if onAt(i) {
			lastOnIdx = i
		}
	}
	// The server has just taken in the state: let it settle (its JIT, its
	// old generation) under the writers alone before the first window.
	settle := envDuration(b, "ZKHERD_BENCH_SETTLE", 30*time.Second)
	fmt.Fprintf(os.Stderr, "settling for %s\n", settle)
	time.Sleep(settle)
	var results, warms []result
	var cur *inspector // the inspector running, if any
	keep := warmup > 0 || warmScan
	b.ResetTimer()
	for i := range 2 * pairs {
		on := onAt(i)
		length := window
		if i == lastOnIdx {
			length = lastOn
		}
		if on && cur == nil {
			cur = startInspector(i)
			switch {
			case warmScan:
				warms = append(warms, measure(i, cur, true, 30*time.Minute, cur.scanDone))
			case warmup > 0:
				warms = append(warms, measure(i, cur, true, warmup, nil))
			}
		}
		var in *inspector
		if on {
			in = cur
		}
		results = append(results, measure(i, in, false, length, nil))
		if on && (!keep || i+1 == 2*pairs || !onAt(i+1)) {
			stopInspector(cur, i)
			cur = nil
		}
	}
	b.StopTimer()

	var cpuOn, cpuOff, reqOn, reqOff float64
	var p99On, p99Off []time.Duration
	var latOn, latOff []time.Duration
	for _, r := range results {
		if r.on {
			cpuOn += r.cpu
			reqOn += r.reqPerSec
			p99On = append(p99On, r.p99)
			latOn = append(latOn, r.lat...)
		} else {
			cpuOff += r.cpu
			reqOff += r.reqPerSec
			p99Off = append(p99Off, r.p99)
			latOff = append(latOff, r.lat...)
		}
	}
	medianOf := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		if len(s)%2 == 0 {
			return (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		return s[len(s)/2]
	}
	last := results[lastOnIdx]
	// Every pair of windows, not only the medians: the budget holds in each.
	worstP99, worstCPU := 0.0, 0.0
	for k := 0; k+1 < len(results); k += 2 {
		on, off := results[k], results[k+1]
		if !on.on {
			on, off = off, on
		}
		p99, cpu := float64(on.p99)/float64(off.p99), on.cpu/off.cpu
		worstP99, worstCPU = max(worstP99, p99), max(worstCPU, cpu)
		fmt.Fprintf(os.Stderr, "pair %d (windows %d, %d): setData p99 on/off %.2fx (%s / %s), server CPU on/off %.2fx\n", k/2, k, k+1, p99, on.p99, off.p99, cpu)
	}
	// The measure's own noise: the "off" windows against each other, no
	// inspector in either (ABBA puts two side by side in the middle of the
	// run). A budget of 1.2x in every pair can be read only where these
	// stay well within it.
	var offs []int // window indexes
	for i, r := range results {
		if !r.on {
			offs = append(offs, i)
		}
	}
	worstOff := 0.0
	for k := 0; k+1 < len(offs); k++ {
		first, second := offs[k], offs[k+1]
		ratio := float64(results[second].p99) / float64(results[first].p99)
		worstOff = max(worstOff, ratio, 1/ratio)
		fmt.Fprintf(os.Stderr, "off windows %d and %d (no inspector in either): setData p99 %.2fx\n", first, second, ratio)
	}
	if len(offs) > 1 {
		b.ReportMetric(worstOff, "worst_off_off_p99")
	}
	// The warm-ups (the inspector's start and first walk) against the
	// "off" window before each: their own figure, never in the pairs.
	worstWarm := 0.0
	for _, wr := range warms {
		if wr.index == 0 {
			continue
		}
		off := results[wr.index-1]
		ratio := float64(wr.p99) / float64(off.p99)
		worstWarm = max(worstWarm, ratio)
		fmt.Fprintf(os.Stderr, "warm-up before window %d (%s, against off window %d): setData p99 on/off %.2fx (%s / %s), server CPU on/off %.2fx\n",
			wr.index, wr.length.Round(time.Second), wr.index-1, ratio, wr.p99, off.p99, wr.cpu/off.cpu)
	}
	if len(warms) > 0 {
		b.ReportMetric(worstWarm, "worst_warmup_p99_on/off")
	}
	// Pooled: every write of the "on" windows against every write of the
	// "off" ones (a figure beside the pairs, not in their place).
	_, pooledOn := durationPercentiles(latOn)
	_, pooledOff := durationPercentiles(latOff)
	if pooledOff > 0 {
		b.ReportMetric(float64(pooledOn)/float64(pooledOff), "pooled_p99_on/off")
	}
	b.ReportMetric(worstP99, "worst_pair_p99_on/off")
	b.ReportMetric(worstCPU, "worst_pair_cpu_on/off")
	b.ReportMetric(cpuOn/cpuOff, "cpu_on/off")
	b.ReportMetric(float64(medianOf(p99On))/float64(medianOf(p99Off)), "p99_on/off")
	b.ReportMetric(firstMax.Seconds(), "first_locks_s")
	b.ReportMetric((reqOn-reqOff)/float64(pairs), "inspector_req/s")
	b.ReportMetric(float64(last.rssEnd)/1024, "rss_end_MB")
	if len(last.rssSamples) > 1 {
		b.ReportMetric(float64(last.rssEnd-last.rssSamples[0])/1024, "rss_growth_MB")
	}
	fmt.Fprintf(os.Stderr, "server CPU: off %.3f, on %.3f cores (%.2fx); setData p99 median off %s, on %s (%.2fx), pooled off %s, on %s (%d and %d writes); first Locks screen within %s; inspector requests %.1f/s",
		cpuOff/float64(pairs), cpuOn/float64(pairs), cpuOn/cpuOff, medianOf(p99Off), medianOf(p99On),
		float64(medianOf(p99On))/float64(medianOf(p99Off)), pooledOff, pooledOn, len(latOff), len(latOn), firstMax, (reqOn-reqOff)/float64(pairs))
	fmt.Fprintln(os.Stderr)
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a whole number of 1 or more", name, v)
	}
	return n
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return d
}

// procCPU is a process's user+system CPU time in seconds.
func procCPU(b *testing.B, pid int) float64 {
	d, err := procstat.CPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d.Seconds()
}

// rssKiB is a process's resident set size (-1 if unknown).
func rssKiB(pid int) int64 {
	v, err := procstat.StatusKiB(pid, "VmRSS")
	if err != nil {
		return -1
	}
	return v
}

// packets is the server's count of packets received, from srvr: mntr
// holds the benchmark's server up for about 10 ms, and writes that arrive
// meanwhile wait, at the edge of every window.
func packets(ctx context.Context, server string) int64 {
	out, err := fourlw.QueryTLS(ctx, server, "srvr", nil)
	if err != nil {
		return 0
	}
	s, err := fourlw.ParseSrvr(out)
	if err != nil {
		return 0
	}
	return s.Received
}

func mntrSummary(ctx context.Context, server string) string {
	out, err := fourlw.QueryTLS(ctx, server, "mntr", nil)
	if err != nil {
		return err.Error()
	}
	m, _ := fourlw.ParseMntr(out)
	return fmt.Sprintf("znodes %s, watches %s, ephemerals %s, connections %s",
		m["zk_znode_count"], m["zk_watch_count"], m["zk_ephemerals_count"], m["zk_num_alive_connections"])
}

// startHeadlessExporter starts "zkherd inspect --headless" on a free port
// and a scraper that reads its /metrics every second. It returns the
// exporter's pid, the time to the first scrape with a lock directory and
// how many it had, a function that says whether its first walk of the
// tree has ended (zkherd_inspector_scan_complete), and a stop function.
func startHeadlessExporter(b *testing.B, bin, server, extra string) (pid int, firstLocks time.Duration, lockDirs string, scanDone func() bool, stop func()) {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	args := append([]string{"inspect", "--headless", "--metrics-addr", addr, "--server", server}, strings.Fields(extra)...)
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	launched := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	scrape := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	for time.Since(launched) < 60*time.Second {
		if n := strings.Count(scrape(), "\nzkherd_lock_waiters{"); n > 0 {
			firstLocks, lockDirs = time.Since(launched), strconv.Itoa(n)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if firstLocks == 0 {
		b.Errorf("no scrape with a lock directory within 60 s; exporter output:\n%s", out.String())
	}
	done := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				scrape()
			}
		}
	}()
	scanDone = func() bool { return strings.Contains(scrape(), "\nzkherd_inspector_scan_complete 1\n") }
	return cmd.Process.Pid, firstLocks, lockDirs, scanDone, func() {
		close(done)
		<-scraped
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
}
