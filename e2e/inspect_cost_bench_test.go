package e2e

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/procstat"
)

// BenchmarkInspectorCost builds a production-sized state on a 1-node server
// (about 205,000 znodes, 2,000 sessions, 100,000 data watches, 4,000
// ephemeral registrations in 1,000 directories, a directory of 10,000
// children, 20 lock directories) and runs "zkherd inspect" on its Locks view
// in alternating windows, off and on, while another client sets data at a
// steady rate. It reports the server's CPU (from /proc/<jvm pid>/stat) and
// the other client's setData p99 with the inspector on over off, the time to
// the first Locks screen (first_locks_s: from Enter on the command line to a
// screen listing a lock directory, the slowest of the on windows), the
// requests the inspector sent per second, and its RSS at the start and end
// of each window; each pair of windows (worst_pair_*), and the "off" windows
// against each other (worst_off_off_p99: the measure's own noise, no
// inspector in either).
//
//	go test -run '^$' -bench InspectorCost -benchtime 1x -timeout 60m ./e2e/
//
// ZKHERD_BENCH_WINDOW (default 60s) sets each window's length,
// ZKHERD_BENCH_PAIRS (default 3) the number of off/on pairs (taken in ABBA
// order, after ZKHERD_BENCH_SETTLE, default 30s, of the writer alone), and
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
func BenchmarkInspectorCost(b *testing.B) {
	var err error
	window := envDuration(b, "ZKHERD_BENCH_WINDOW", 60*time.Second)
	lastOn := envDuration(b, "ZKHERD_BENCH_LAST_ON", window)
	pairs := 3
	if v := os.Getenv("ZKHERD_BENCH_PAIRS"); v != "" {
		if pairs, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	bin := os.Getenv("ZKHERD_BENCH_BIN") // a binary built beforehand, else this tree's
	if bin == "" {
		bin = zkherdBin(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
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

	w := startWriter(ctx, ens.Servers(), 200)
	defer w.stop()

	extra := os.Getenv("ZKHERD_BENCH_ARGS")
	// ZKHERD_BENCH_HEADLESS=1 measures "zkherd inspect --headless" instead,
	// scraped every second as a Prometheus would (harsher than the usual
	// 15 s): first_locks_s is then the time to a scrape with a lock's
	// waiters.
	headless := os.Getenv("ZKHERD_BENCH_HEADLESS") == "1"
	search := os.Getenv("ZKHERD_BENCH_SEARCH")

	type result struct {
		on               bool
		cpu              float64 // server cores
		inspectorCPU     float64 // the inspector's cores
		p99, p50         time.Duration
		writes           int
		reqPerSec        float64
		firstLocks       time.Duration
		rssStart, rssEnd int64 // KiB
		rssSamples       []int64
		lockDirs         string
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
	// old generation) under the writer alone before the first window.
	settle := envDuration(b, "ZKHERD_BENCH_SETTLE", 30*time.Second)
	fmt.Fprintf(os.Stderr, "settling for %s\n", settle)
	time.Sleep(settle)
	var results []result
	b.ResetTimer()
	for i := range 2 * pairs {
		on := onAt(i)
		length := window
		if i == lastOnIdx {
			length = lastOn
		}
		r := result{on: on}
		pid := 0
		var stopHeadless func()
		var term *tmuxScreen // the inspector's terminal in an "on" window
		if on && headless {
			pid, r.firstLocks, r.lockDirs, stopHeadless = startHeadlessExporter(b, bin, server, extra)
			r.rssStart = rssKiB(pid)
		} else if on {
			// The terminal is ready first (a shell waiting for Enter), so
			// that the time to the first Locks screen counts zkherd's
			// start, not tmux's.
			term = newTmuxScreen(b, 120, 40, "read go; exec "+bin+" inspect --server "+server+" "+extra)
			launched := time.Now()
			term.keys("Enter")
			term.keys("2")
			re := regexp.MustCompile(`Locks\s+(\d+) lock director`)
			for time.Since(launched) < 60*time.Second {
				screen := term.screen()
				if m := re.FindStringSubmatch(screen); m != nil && m[1] != "0" {
					r.firstLocks = time.Since(launched)
					r.lockDirs = m[1]
					if i == 1 { // the first "on" window
						fmt.Fprintf(os.Stderr, "first Locks screen of window %d, after %s:\n%s\n", i, r.firstLocks.Round(time.Millisecond), screen)
					}
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if r.firstLocks == 0 {
				screen := term.screen()
				b.Errorf("window %d: no Locks screen with a lock directory within 60 s:\n%s", i, screen)
			}
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
			pid = term.pid()
			r.rssStart = rssKiB(pid)
		}
		cpu0, pk0, t0 := procCPU(b, jvm), packets(ctx, server), time.Now()
		var icpu0 float64
		if on {
			icpu0 = procCPU(b, pid)
		}
		w.reset()
		sampleEvery := max(length/10, 5*time.Second)
		for end := t0.Add(length); time.Now().Before(end); {
			time.Sleep(min(sampleEvery, time.Until(end)))
			if on {
				r.rssSamples = append(r.rssSamples, rssKiB(pid))
			}
		}
		elapsed := time.Since(t0).Seconds()
		r.cpu = (procCPU(b, jvm) - cpu0) / elapsed
		r.reqPerSec = float64(packets(ctx, server)-pk0) / elapsed
		r.p50, r.p99, r.writes = w.percentiles()
		slow := w.slowest(t0)
		if on {
			r.inspectorCPU = (procCPU(b, pid) - icpu0) / elapsed
			r.rssEnd = rssKiB(pid)
			if stopHeadless != nil {
				stopHeadless()
			} else {
				if i == lastOnIdx {
					screen := term.screen()
					fmt.Fprintf(os.Stderr, "inspector screen at the end of window %d:\n%s\n", i, screen)
				}
				if search != "" {
					// How far the search got: the Search view's first line.
					term.keys(":")
					term.text("search")
					term.keys("Enter")
					time.Sleep(500 * time.Millisecond)
					screen := term.screen()
					for _, line := range strings.Split(screen, "\n") {
						if strings.HasPrefix(line, "Search  find ") || strings.HasPrefix(line, "Search  grep ") {
							fmt.Fprintf(os.Stderr, "  window %d search: %s\n", i, strings.TrimSpace(line))
						}
					}
				}
				term.close()
			}
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "window %d inspector=%v (%.3f cores): server %.3f cores, %.0f req/s, setData p50 %s p99 %s (%d writes), first Locks %s (%s dirs), RSS %d -> %d KiB %v",
			i, on, r.inspectorCPU, r.cpu, r.reqPerSec, r.p50, r.p99, r.writes, r.firstLocks, r.lockDirs, r.rssStart, r.rssEnd, r.rssSamples)
		fmt.Fprintln(os.Stderr)
		fmt.Fprintf(os.Stderr, "  slowest 1%% of writes by second of the window (from %s UTC): %s\n", t0.UTC().Format("15:04:05.000"), slow)
	}
	b.StopTimer()

	var cpuOn, cpuOff, reqOn, reqOff float64
	var p99On, p99Off []time.Duration
	var firstMax time.Duration
	for _, r := range results {
		if r.on {
			cpuOn += r.cpu
			reqOn += r.reqPerSec
			p99On = append(p99On, r.p99)
			firstMax = max(firstMax, r.firstLocks)
		} else {
			cpuOff += r.cpu
			reqOff += r.reqPerSec
			p99Off = append(p99Off, r.p99)
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
		fmt.Fprintf(os.Stderr, "pair %d (windows %d, %d): setData p99 on/off %.2fx, server CPU on/off %.2fx\n", k/2, k, k+1, p99, cpu)
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
	fmt.Fprintf(os.Stderr, "server CPU: off %.3f, on %.3f cores (%.2fx); setData p99 median off %s, on %s (%.2fx); first Locks screen within %s; inspector requests %.1f/s",
		cpuOff/float64(pairs), cpuOn/float64(pairs), cpuOn/cpuOff, medianOf(p99Off), medianOf(p99On),
		float64(medianOf(p99On))/float64(medianOf(p99Off)), firstMax, (reqOn-reqOff)/float64(pairs))
	fmt.Fprintln(os.Stderr)
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

func packets(ctx context.Context, server string) int64 {
	out, err := fourlw.QueryTLS(ctx, server, "mntr", nil)
	if err != nil {
		return 0
	}
	m, err := fourlw.ParseMntr(out)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseInt(m["zk_packets_received"], 10, 64)
	return v
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

type prodState struct{ conns []*zk.Conn }

func (s *prodState) close() {
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// buildProductionState creates the znodes, sessions, ephemerals, watches
// and locks.
func buildProductionState(ctx context.Context, b *testing.B, servers []string) *prodState {
	admin, err := benchConnect(ctx, servers, 8<<20)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	acl := zk.WorldACL(zk.PermAll)
	// Persistent nodes: the directories first, then the leaves in multis
	// of 500, four at a time.
	var dirs, leaves []string
	dirs = append(dirs, "/bench", "/bench/cfg", "/bench/data", "/bench/big", "/bench/svc", "/bench/locks", "/bench/w")
	for a := range 100 {
		dirs = append(dirs, fmt.Sprintf("/bench/cfg/app-%02d", a))
		for k := range 1000 {
			leaves = append(leaves, fmt.Sprintf("/bench/cfg/app-%02d/key-%03d", a, k))
		}
	}
	for d := range 90 {
		dirs = append(dirs, fmt.Sprintf("/bench/data/d-%02d", d))
		for n := range 1000 {
			leaves = append(leaves, fmt.Sprintf("/bench/data/d-%02d/n-%03d", d, n))
		}
	}
	for c := range 10000 {
		leaves = append(leaves, fmt.Sprintf("/bench/big/c-%05d", c))
	}
	for s := range 1000 {
		leaves = append(leaves, fmt.Sprintf("/bench/svc/s-%03d", s))
	}
	for l := range 20 {
		leaves = append(leaves, fmt.Sprintf("/bench/locks/l-%02d", l))
	}
	for k := range 10 {
		leaves = append(leaves, fmt.Sprintf("/bench/w/k-%d", k))
	}
	data := []byte(`{"value":"0123456789abcdef","v":1}`)
	for _, p := range dirs {
		if _, err := admin.Create(p, data, 0, acl); err != nil {
			b.Fatalf("create %s: %v", p, err)
		}
	}
	const batch = 500
	var bwg sync.WaitGroup
	bsem := make(chan struct{}, 4)
	var berr error
	var bmu sync.Mutex
	for i := 0; i < len(leaves); i += batch {
		ops := make([]any, 0, batch)
		for _, p := range leaves[i:min(i+batch, len(leaves))] {
			ops = append(ops, &zk.CreateRequest{Path: p, Data: data, Acl: acl})
		}
		bwg.Add(1)
		bsem <- struct{}{}
		go func() {
			defer bwg.Done()
			defer func() { <-bsem }()
			if _, err := admin.Multi(ops...); err != nil {
				bmu.Lock()
				berr = err
				bmu.Unlock()
			}
		}()
	}
	bwg.Wait()
	if berr != nil {
		b.Fatalf("create: %v", berr)
	}
	// 2,000 sessions, opened 50 at a time, with small receive buffers.
	st := &prodState{conns: make([]*zk.Conn, 2000)}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	var mu sync.Mutex
	var firstErr error
	for i := range st.conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := benchConnect(ctx, servers, 256<<10)
			if err == nil {
				st.conns[i] = c
				// Two registrations each: 4,000 ephemerals in 1,000 directories.
				for r := range 2 {
					if _, err = c.Create(fmt.Sprintf("/bench/svc/s-%03d/i-%d", i/2, i%2*2+r), nil, zk.FlagEphemeral, acl); err != nil {
						break
					}
				}
			}
			// 50 data watches each on config keys, four sessions per key.
			for j := 0; err == nil && j < 50; j++ {
				k := (i*50 + j) % 25000
				_, _, _, err = c.GetW(fmt.Sprintf("/bench/cfg/app-%02d/key-%03d", k/1000%100, k%1000))
			}
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatalf("sessions: %v", firstErr)
	}
	// 20 lock directories, 5 contenders each in Curator's layout, each
	// waiter watching its predecessor.
	for l := range 20 {
		var prev string
		for k := range 5 {
			c := st.conns[l*5+k]
			name, err := c.Create(fmt.Sprintf("/bench/locks/l-%02d/_c_%s-lock-", l, uuid.NewString()), nil, zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				b.Fatal(err)
			}
			if prev != "" {
				if _, _, _, err := c.ExistsW(prev); err != nil {
					b.Fatal(err)
				}
			}
			prev = name
		}
	}
	return st
}

// writer sets data at a steady rate and records each call's latency.
type writer struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	lat    []time.Duration
	at     []time.Time // when each write in lat started
}

func startWriter(ctx context.Context, servers []string, perSec int) *writer {
	ctx, cancel := context.WithCancel(ctx)
	w := &writer{cancel: cancel, done: make(chan struct{})}
	c, err := benchConnect(ctx, servers, 1<<20)
	if err != nil {
		panic(err)
	}
	go func() {
		defer close(w.done)
		defer c.Close()
		tick := time.NewTicker(time.Second / time.Duration(perSec))
		defer tick.Stop()
		// Four in flight at most, so that one slow reply does not stop the pace.
		sem := make(chan struct{}, 4)
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := 0; ; i++ {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
			select {
			case sem <- struct{}{}:
			default:
				continue // all four busy: the tick is missed, not queued
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				t := time.Now()
				if _, err := c.Set(fmt.Sprintf("/bench/w/k-%d", i%10), []byte(strconv.Itoa(i)), -1); err != nil {
					return
				}
				d := time.Since(t)
				w.mu.Lock()
				w.lat = append(w.lat, d)
				w.at = append(w.at, t)
				w.mu.Unlock()
			}()
		}
	}()
	return w
}

func (w *writer) reset() {
	w.mu.Lock()
	w.lat, w.at = w.lat[:0], w.at[:0]
	w.mu.Unlock()
}

// slowest says when the window's slowest 1% of writes started, as
// "second:count" pairs from the window's start: a tail that follows a
// period points at what runs on that period.
func (w *writer) slowest(t0 time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lat) == 0 {
		return ""
	}
	idx := make([]int, len(w.lat))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(w.lat[b], w.lat[a]) })
	counts := map[int]int{}
	for _, i := range idx[:max(1, len(idx)/100)] {
		counts[int(w.at[i].Sub(t0).Seconds())]++
	}
	secs := slices.Sorted(maps.Keys(counts))
	var sb strings.Builder
	for _, sec := range secs {
		fmt.Fprintf(&sb, " %d:%d", sec, counts[sec])
	}
	return strings.TrimSpace(sb.String())
}

func (w *writer) percentiles() (p50, p99 time.Duration, n int) {
	w.mu.Lock()
	s := slices.Clone(w.lat)
	w.mu.Unlock()
	if len(s) == 0 {
		return 0, 0, 0
	}
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100], len(s)
}

func (w *writer) stop() {
	w.cancel()
	<-w.done
}

// startHeadlessExporter starts "zkherd inspect --headless" on a free port
// and a scraper that reads its /metrics every second. It returns the
// exporter's pid, the time to the first scrape with a lock directory and
// how many it had, and a stop function.
func startHeadlessExporter(b *testing.B, bin, server, extra string) (pid int, firstLocks time.Duration, lockDirs string, stop func()) {
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
	return cmd.Process.Pid, firstLocks, lockDirs, func() {
		close(done)
		<-scraped
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
}
