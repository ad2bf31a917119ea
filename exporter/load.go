package exporter

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// LatencyBuckets are the classic buckets of zkherd_latency_seconds, for
// scrapers that do not ask for native histograms: 500 us to 60 s, the
// range of a lock's acquire from an idle server to a herd on a slow one.
var LatencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Load is a load run's metrics: a tap on its progress (loadrun.Sink and
// loadrun.IntervalSink) that keeps the last figures of each scenario and
// hands them to every scrape. The counters are the run's own counts, not
// a second count kept here: the last scrape of a finished run reads what
// report.json says.
type Load struct {
	latency *prometheus.HistogramVec

	mu   sync.Mutex
	runs map[string]*loadFigures // by scenario (run name)
}

// loadFigures are one scenario's last progress figures.
type loadFigures struct {
	runID, recipe      string
	ops                int64
	errorsByKind       map[string]int64
	clients, connected int
	wakeups            float64
	wakeupsKnown       bool
	violations         map[string]int64
}

var (
	descInfo = prometheus.NewDesc("zkherd_run_info",
		"The load run a scenario belongs to (value 1): its run id and recipe.",
		[]string{"scenario", "run_id", "recipe"}, nil)
	descOps = prometheus.NewDesc("zkherd_operations_total",
		"Operations completed (acquisitions, items, elections...), as report.json counts them.",
		[]string{"scenario"}, nil)
	descErrors = prometheus.NewDesc("zkherd_errors_total",
		"Failed operations by kind.", []string{"scenario", "kind"}, nil)
	descClients = prometheus.NewDesc("zkherd_clients",
		"Clients the scenario runs, each its own ZooKeeper session.", []string{"scenario"}, nil)
	descConnected = prometheus.NewDesc("zkherd_clients_connected",
		"Clients whose session is connected now.", []string{"scenario"}, nil)
	descWakeups = prometheus.NewDesc("zkherd_wakeups_per_release",
		"Watch events delivered to clients per lock release so far (1 for a fair lock, the waiters for a herd); absent before the first release.",
		[]string{"scenario"}, nil)
	descViolations = prometheus.NewDesc("zkherd_check_violations_total",
		"Correctness violations found so far by check; a check the scenario does not make has no series.",
		[]string{"scenario", "check"}, nil)
)

// NewLoad returns a Load registered with reg.
func NewLoad(reg prometheus.Registerer) (*Load, error) {
	l := &Load{
		runs: map[string]*loadFigures{},
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "zkherd_latency_seconds",
			Help: "Latency of each phase of an operation, from the values the run's HdrHistograms record (corrected for coordinated omission in open-model runs, as the report's headline).",
			// Classic buckets for scrapers that want text; a native
			// histogram (about 10% per bucket) for those that ask for it.
			Buckets:                         LatencyBuckets,
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  160,
			NativeHistogramMinResetDuration: time.Hour,
		}, []string{"scenario", "phase"}),
	}
	if err := reg.Register(l); err != nil {
		return nil, err
	}
	return l, nil
}

// Describe is prometheus.Collector's.
func (l *Load) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInfo, descOps, descErrors, descClients, descConnected, descWakeups, descViolations} {
		ch <- d
	}
	l.latency.Describe(ch)
}

// Collect is prometheus.Collector's: the last figures of every scenario.
func (l *Load) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	for name, f := range l.runs {
		ch <- prometheus.MustNewConstMetric(descInfo, prometheus.GaugeValue, 1, name, f.runID, f.recipe)
		ch <- prometheus.MustNewConstMetric(descOps, prometheus.CounterValue, float64(f.ops), name)
		for _, k := range sortedKeys(f.errorsByKind) {
			ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(f.errorsByKind[k]), name, k)
		}
		ch <- prometheus.MustNewConstMetric(descClients, prometheus.GaugeValue, float64(f.clients), name)
		ch <- prometheus.MustNewConstMetric(descConnected, prometheus.GaugeValue, float64(f.connected), name)
		if f.wakeupsKnown {
			ch <- prometheus.MustNewConstMetric(descWakeups, prometheus.GaugeValue, f.wakeups, name)
		}
		for _, k := range sortedKeys(f.violations) {
			ch <- prometheus.MustNewConstMetric(descViolations, prometheus.CounterValue, float64(f.violations[k]), name, k)
		}
	}
	l.mu.Unlock()
	l.latency.Collect(ch)
}

// Starting is loadrun.Sink's: the scenario's series appear at its start.
func (l *Load) Starting(_ int, run scenarios.Run, _ string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.runs[run.Name]; !ok {
		l.runs[run.Name] = &loadFigures{recipe: string(run.Recipe), clients: run.Clients}
	}
}

// Progress is loadrun.Sink's: it keeps the figures every scrape reads.
func (l *Load) Progress(p loadgen.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.runs[p.Name]
	if f == nil {
		f = &loadFigures{}
		l.runs[p.Name] = f
	}
	f.runID, f.recipe = p.RunID, string(p.Recipe)
	f.ops, f.clients, f.connected = p.Ops, p.Clients, p.SessionsConnected
	f.errorsByKind = cloneMap(p.ErrorsByKind)
	f.violations = cloneMap(p.ViolationCounts)
	// Wake-ups per release mean something once a lock was released.
	f.wakeups = figures.Get(p.Totals, figures.WakeupsPerRelease)
	f.wakeupsKnown = p.Recipe.IsLock() && f.wakeups > 0
}

// Notice is loadrun.Sink's; notices are for people, not metrics.
func (l *Load) Notice(string) {}

// Interval is loadrun.IntervalSink's: every value of the interval goes
// into the phase's histogram, at the value HdrHistogram keeps for it
// (within 0.1%, its 3 significant digits).
func (l *Load) Interval(run string, p metrics.Phase, pi *metrics.PhaseInterval) {
	h := pi.Corrected
	if h == nil {
		return
	}
	obs := l.latency.WithLabelValues(run, string(p))
	h.ForEachBucket(func(us, n int64) bool {
		v := float64(us) / 1e6
		for range n {
			obs.Observe(v)
		}
		return true
	})
}

func cloneMap(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Started reports whether a scenario started (a scrape has something to
// read).
func (l *Load) Started() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs) > 0
}

// ServeLoad serves a new Load on addr; process, when set, labels every
// series (one endpoint per process of a distributed run).
func ServeLoad(addr, process string) (*Endpoint, *Load, error) {
	reg := prometheus.NewRegistry()
	var r prometheus.Registerer = reg
	if process != "" {
		r = prometheus.WrapRegistererWith(prometheus.Labels{"process": process}, reg)
	}
	l, err := NewLoad(r)
	if err != nil {
		return nil, nil, fmt.Errorf("exporter: %w", err)
	}
	ep, err := Listen(addr, reg)
	if err != nil {
		return nil, nil, err
	}
	return ep, l, nil
}
