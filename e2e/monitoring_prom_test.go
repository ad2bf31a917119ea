package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/recipes"
)

// The tests here run zkherd's exporters against a real ensemble, scraped
// every second by Debian's Prometheus (2.42, /usr/bin/prometheus), and read
// the values back through Prometheus's HTTP query API.

const prometheusBin = "/usr/bin/prometheus"

// freePort returns a loopback address with a port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startProcess starts cmd with its output in a log the test shows if it
// fails, and interrupts it (then kills it) when the test ends.
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *strings.Builder {
	t.Helper()
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s's output:\n%s", name, log.String())
		}
	})
	return &log
}

// prometheus is a Prometheus server scraping targets (job -> address)
// every second.
type prometheus struct {
	t    *testing.T
	base string
}

func startPrometheus(t *testing.T, targets map[string]string) *prometheus {
	t.Helper()
	if _, err := os.Stat(prometheusBin); err != nil {
		t.Fatalf("%s: %v (install Debian's prometheus package: scripts/setup.sh)", prometheusBin, err)
	}
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nscrape_configs:\n")
	for job, addr := range targets {
		fmt.Fprintf(&cfg, "  - job_name: %s\n    static_configs: [{targets: [%q]}]\n", job, addr)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	startProcess(t, "prometheus", exec.Command(prometheusBin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--storage.tsdb.retention.time=1h"))
	p := &prometheus{t: t, base: "http://" + addr}
	p.eventually("Prometheus ready", 60*time.Second, func() (bool, string) {
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return p
}

// sample is one series of an instant query's answer.
type sample struct {
	Labels map[string]string
	Value  float64
}

// query asks Prometheus an instant query.
func (p *prometheus) query(q string) ([]sample, error) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, body.Error)
	}
	var out []sample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v", q, r.Value[1])
		}
		out = append(out, sample{Labels: r.Metric, Value: v})
	}
	return out, nil
}

// eventually polls cond until it holds or within passes.
func (p *prometheus) eventually(what string, within time.Duration, cond func() (bool, string)) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: not within %v; last: %s", what, within, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// kazooLock holds a python3-kazoo lock at path with waiters blocked on it
// until the test ends.
func kazooLock(t *testing.T, servers, path string, waiters int) {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "testdata/monitoring/kazoo_lock.py", servers, path, strconv.Itoa(waiters))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start python3-kazoo: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		line <- s.Text()
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		if l != "OK" {
			t.Fatalf("kazoo lock %s: %q, stderr:\n%s", path, l, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("kazoo lock %s did not start; stderr:\n%s", path, stderr.String())
	}
}

// herdLock holds a zkherd herd lock at path with waiters blocked on it
// (each its own session, all watching the one node) until the test ends.
func herdLock(t *testing.T, servers []string, path string, waiters int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	open := func() *recipes.Session {
		s, err := recipes.NewSession(ctx, servers)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	if err := recipes.NewHerdLock(open(), path).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		l := recipes.NewHerdLock(open(), path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Lock(ctx) // blocks until the test ends: the holder never lets go
		}()
	}
}

// TestPrometheusScrapesLoadAndInspector: a headless inspector and a load
// run with --metrics-addr, both scraped every second by a real Prometheus,
// read back through its query API: the waiters gauge of a python3-kazoo
// lock with 4 blocked waiters is 4; a zkherd queue of 3 items has depth 3
// and its head an age; the member is up; the herd gauge of a zkherd herd lock
// with 5 waiters rises to 5, and stays at 1 or less for the fair locks
// (kazoo's, and the loads' fair locks, held 300 ms each; one load's found
// and judged within a bound); the counted load's operations counter
// and acquire histogram count match its report.json (window and ramp-up).
func TestPrometheusScrapesLoadAndInspector(t *testing.T) {
	inLane(t, commandLane)
	ens := enstest.Start(t, 1)
	cs := ens.ConnectString()
	bin := zkherdBin(t)
	loadAddr, inspAddr := freePort(t), freePort(t)
	prom := startPrometheus(t, map[string]string{"zkherd-load": loadAddr, "zkherd-inspect": inspAddr})

	const kazooPath, kazooWaiters = "/kazoo/fair", 4
	const herdPath, herdWaiters = "/app/herd", 5
	const queuePath, queueItems = "/app/jobs", 3
	kazooLock(t, cs, kazooPath, kazooWaiters)
	herdLock(t, ens.Servers(), herdPath, herdWaiters)
	qs, err := recipes.NewSession(context.Background(), ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer qs.Close()
	q := recipes.NewQueue(qs, queuePath)
	for range queueItems {
		if _, err := q.Put(context.Background(), []byte("job")); err != nil {
			t.Fatal(err)
		}
	}
	startProcess(t, "zkherd inspect --headless", exec.Command(bin, "inspect", "--headless", "--metrics-addr", inspAddr,
		"--server", cs, "--poll-interval", "500ms"))
	// A load whose fair lock the inspector finds and judges at its own
	// pace: on a busy machine it walks the tree every 15 s here
	// (RescanEvery polls) and asks the watch lists up to 30 s apart
	// (maxPaced), longer than the counted run below lasts (on CI at load
	// average 50-75 that run's lock was never found). So this one runs
	// until the gauge is seen, within a bound, and is interrupted at the end.
	startProcess(t, "zkherd load (its fair lock judged)", exec.Command(bin, "load", "--scenario", "testdata/monitoring/slow-fair.yaml",
		"--server", cs, "--out", t.TempDir(), "--no-tui", "--duration", "3m"))

	gauge := func(metric, path string, want func(float64) bool) func() (bool, string) {
		return func() (bool, string) {
			s, err := prom.query(fmt.Sprintf(`%s{path=%q}`, metric, path))
			if err != nil || len(s) != 1 {
				return false, fmt.Sprint(s, err)
			}
			return want(s[0].Value), fmt.Sprint(s)
		}
	}
	is := func(n float64) func(float64) bool { return func(v float64) bool { return v == n } }
	prom.eventually("the kazoo lock's waiters", 60*time.Second, gauge("zkherd_lock_waiters", kazooPath, is(kazooWaiters)))
	prom.eventually("the herd lock's waiters", 60*time.Second, gauge("zkherd_lock_waiters", herdPath, is(herdWaiters)))
	prom.eventually("the herd lock's herd watchers", 60*time.Second, gauge("zkherd_lock_herd_watchers", herdPath, is(herdWaiters)))
	prom.eventually("the kazoo lock's herd watchers", 60*time.Second, gauge("zkherd_lock_herd_watchers", kazooPath, is(1)))
	prom.eventually("the queue's depth", 60*time.Second, gauge("zkherd_queue_depth", queuePath, is(queueItems)))
	prom.eventually("the queue head's age", 60*time.Second, gauge("zkherd_queue_head_age_seconds", queuePath, func(v float64) bool { return v > 0 && v < 600 }))
	prom.eventually("the member up", 30*time.Second, func() (bool, string) {
		s, err := prom.query(fmt.Sprintf(`zkherd_server_up{member=%q}`, ens.Servers()[0]))
		return err == nil && len(s) == 1 && s[0].Value == 1, fmt.Sprint(s, err)
	})

	// The exporter's own cost, and the one core it runs on (package
	// main's oneCore): this machine has 2 and GOMAXPROCS is not set.
	prom.eventually("the exporter's own GOMAXPROCS and RSS", 30*time.Second, func() (bool, string) {
		procs, err := prom.query(`go_sched_gomaxprocs_threads{job="zkherd-inspect"}`)
		rss, err2 := prom.query(`process_resident_memory_bytes{job="zkherd-inspect"}`)
		return err == nil && err2 == nil && len(procs) == 1 && procs[0].Value == 1 && len(rss) == 1 && rss[0].Value > 0,
			fmt.Sprint(procs, err, rss, err2)
	})

	out := t.TempDir()
	load := exec.Command(bin, "load", "--scenario", "testdata/monitoring/slow-fair.yaml",
		"--server", cs, "--out", out, "--no-tui", "--metrics-addr", loadAddr, "--metrics-linger", "4s")
	if b, err := load.CombinedOutput(); err != nil {
		t.Fatalf("zkherd load: %v\n%s", err, b)
	}
	type figures struct {
		Operations int64
		Latency    map[string]struct{ Count int64 } `json:"latency_ms"`
	}
	var rep struct {
		Scenarios []struct {
			Name string
			figures
			Ramp *figures // the ramp-up's, apart from the window's
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 1 || rep.Scenarios[0].Operations == 0 {
		t.Fatalf("report.json: %+v, want one scenario with operations", rep.Scenarios)
	}
	// The endpoint covers the whole run: the report's window plus its
	// ramp-up.
	sc := rep.Scenarios[0]
	ops, acquires := sc.Operations, sc.Latency["acquire"].Count
	if sc.Ramp != nil {
		ops += sc.Ramp.Operations
		acquires += sc.Ramp.Latency["acquire"].Count
	}
	for metric, want := range map[string]int64{
		"zkherd_operations_total":                       ops,
		`zkherd_latency_seconds_count{phase="acquire"}`: acquires,
	} {
		q := fmt.Sprintf(`last_over_time(%s[10m])`, withScenario(metric, sc.Name))
		s, err := prom.query(q)
		if err != nil || len(s) != 1 {
			t.Errorf("%s: %v %v", q, s, err)
			continue
		}
		if got := int64(s[0].Value); got != want {
			t.Errorf("%s = %d, report.json says %d", q, got, want)
		}
	}

	// A load's fair lock had its herd gauge, and over the whole test every
	// fair lock's herd gauge stayed at 1 or less; the herd lock's did not.
	herdOf := `max by (path) (max_over_time(zkherd_lock_herd_watchers[10m]))`
	prom.eventually("a load's fair lock's herd gauge", 2*time.Minute, func() (bool, string) {
		herd, err := prom.query(herdOf)
		for _, s := range herd {
			if strings.HasPrefix(s.Labels["path"], "/zkherd/runs/") {
				return true, ""
			}
		}
		waiters, _ := prom.query(`max by (path, layout) (max_over_time(zkherd_lock_waiters[10m]))`)
		return false, fmt.Sprintf("herd gauges %v %v; waiters seen: %v", herd, err, waiters)
	})
	herd, err := prom.query(herdOf)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range herd {
		switch path := s.Labels["path"]; {
		case path == herdPath:
			if s.Value != herdWaiters {
				t.Errorf("herd lock %s: herd watchers at most %v, want %d", path, s.Value, herdWaiters)
			}
		default:
			if s.Value > 1 {
				t.Errorf("fair lock %s: herd watchers reached %v, want 1 or less", path, s.Value)
			}
		}
	}
}

// withScenario adds scenario="name" to a selector.
func withScenario(metric, name string) string {
	if i := strings.Index(metric, "{"); i >= 0 {
		return metric[:i+1] + fmt.Sprintf("scenario=%q,", name) + metric[i+1:]
	}
	return metric + fmt.Sprintf("{scenario=%q}", name)
}
