package exporter

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scenarios"
)

// LatencyBuckets are the classic buckets of zkherd_latency_seconds, for
// scrapers that do not ask for native histograms: 500 us to 60 s, the
// range of a lock's acquire from an idle server to a herd on a slow one.
var LatencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Load is one process's load-run metrics: it takes the run's events (from
// Loads, which reads a loadrun subscription with loadrun.WantIntervals),
// keeps the last figures of each scenario and hands them to every scrape.
// The counters are the run's own counts, not a second count kept here:
// the last scrape of a finished run reads what report.json says.
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
	totals             figures.Totals // the window's raw counts: the figures table's input
	violations         map[string]int64
}

var (
	descInfo = prometheus.NewDesc("zkherd_run_info",
		"The load run a scenario belongs to (value 1): its run id and recipe.",
		[]string{"scenario", "run_id", "recipe"}, nil)
	descOps = prometheus.NewDesc("zkherd_operations_total",
		"Operations completed over the whole run (acquisitions, items, elections...): report.json's operations plus its ramp-up's.",
		[]string{"scenario"}, nil)
	descErrors = prometheus.NewDesc("zkherd_errors_total",
		"Failed operations by kind.", []string{"scenario", "kind"}, nil)
	descClients = prometheus.NewDesc("zkherd_clients",
		"Clients the scenario runs, each its own ZooKeeper session.", []string{"scenario"}, nil)
	descConnected = prometheus.NewDesc("zkherd_clients_connected",
		"Clients whose session is connected now.", []string{"scenario"}, nil)
	descViolations = prometheus.NewDesc("zkherd_check_violations_total",
		"Correctness violations found so far by check (once the run ends, every check of its report: linearizability 1 for a violation, threshold:EXPR 1 when crossed); a check not made has no series.",
		[]string{"scenario", "check"}, nil)
)

// The figures table (package figures) is exported as it stands: each
// figure a gauge zkherd_<key>{scenario} (zkherd_wakeups_per_release, ...),
// each raw count of the window a counter zkherd_window_<count>_total. A
// figure or count not known (servers' counters not read) has no series; a
// figure that does not apply to the scenario's recipe has none either.
var (
	figureDescs = func() map[string]*prometheus.Desc {
		m := map[string]*prometheus.Desc{}
		for _, f := range figures.All() {
			help := strings.ToUpper(f.Long[:1]) + f.Long[1:]
			m[f.Key] = prometheus.NewDesc("zkherd_"+f.Key,
				strings.ReplaceAll(help, "%s", "operation")+" since the run's window opened (the report's figure of the same name).",
				[]string{"scenario"}, nil)
		}
		return m
	}()
	countDescs = func() map[figures.Count]*prometheus.Desc {
		m := map[figures.Count]*prometheus.Desc{}
		for _, c := range figures.Counts() {
			m[c.Count] = prometheus.NewDesc("zkherd_window_"+string(c.Count)+"_total",
				strings.ToUpper(c.Doc[:1])+c.Doc[1:]+" (since the run's window opened).", []string{"scenario"}, nil)
		}
		return m
	}()
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
	for _, d := range []*prometheus.Desc{descInfo, descOps, descErrors, descClients, descConnected, descViolations} {
		ch <- d
	}
	for _, f := range figures.All() {
		ch <- figureDescs[f.Key]
	}
	for _, c := range figures.Counts() {
		ch <- countDescs[c.Count]
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
		for _, fig := range figures.For(scenarios.Recipe(f.recipe).Figures()) {
			if v, ok := fig.Value(f.totals); ok {
				ch <- prometheus.MustNewConstMetric(figureDescs[fig.Key], prometheus.GaugeValue, v, name)
			}
		}
		for _, c := range figures.Counts() {
			if v, ok := f.totals[c.Count]; ok {
				ch <- prometheus.MustNewConstMetric(countDescs[c.Count], prometheus.CounterValue, float64(v), name)
			}
		}
		for _, k := range sortedKeys(f.violations) {
			ch <- prometheus.MustNewConstMetric(descViolations, prometheus.CounterValue, float64(f.violations[k]), name, k)
		}
	}
	l.mu.Unlock()
	l.latency.Collect(ch)
}

// apply takes one event: a scenario's series appear at its start, each
// progress report keeps the figures every scrape reads, and every value
// of a closed interval goes into its phase's histogram. Notices are for
// people, not metrics.
func (l *Load) apply(ev loadrun.Event) {
	switch ev := ev.(type) {
	case loadrun.EventStarting:
		l.starting(ev.Run)
	case loadrun.EventProgress:
		l.progress(ev.Progress)
	case loadrun.EventEnded:
		l.ended(ev.Outcome.Results)
	case loadrun.EventInterval:
		obs := l.latency.WithLabelValues(ev.Run, string(ev.Phase))
		for _, v := range ev.Values {
			s := float64(v.Micros) / 1e6
			for range v.Count {
				obs.Observe(s)
			}
		}
	}
}

func (l *Load) starting(run scenarios.Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.runs[run.Name]; !ok {
		l.runs[run.Name] = &loadFigures{recipe: string(run.Recipe), clients: run.Clients}
	}
}

func (l *Load) progress(p loadgen.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.runs[p.Name]
	if f == nil {
		f = &loadFigures{}
		l.runs[p.Name] = f
	}
	f.runID, f.recipe = p.RunID, string(p.Recipe)
	// The whole run's operations: the ramp-up's are counted apart once
	// the window opens. Never below the last value: the two are read one
	// after the other, and a counter that dipped would read as a reset.
	f.ops = max(f.ops, p.RampOps+p.Ops)
	f.clients, f.connected = p.Clients, p.SessionsConnected
	f.errorsByKind = cloneMap(p.ErrorsByKind)
	f.violations = loadgen.ViolationCounts(p.Checks)
	f.totals = p.Totals.Clone()
}

// ended takes each scenario's checks from its report: those the run
// counts only at its end, the linearizability verdict (1 for a
// violation) and each threshold (1 when crossed) join the live ones; a
// check not made has no series.
func (l *Load) ended(results []*loadgen.Result) {
	for _, res := range results {
		counts := loadgen.ViolationCounts(report.ChecksOf(res))
		l.mu.Lock()
		if f := l.runs[res.Run.Name]; f != nil {
			f.violations = counts
		}
		l.mu.Unlock()
	}
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

// ServeLoad serves new Loads on addr; process, when set, labels this
// process's series (a distributed run: see Loads).
func ServeLoad(addr, process string) (*Endpoint, *Loads, error) {
	reg := prometheus.NewRegistry()
	l, err := NewLoads(reg, process)
	if err != nil {
		return nil, nil, fmt.Errorf("exporter: %w", err)
	}
	ep, err := Listen(addr, reg)
	if err != nil {
		return nil, nil, err
	}
	return ep, l, nil
}
