package exporter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/scenarios"
)

func waiter(node string, watching ...string) inspect.LockEntry {
	return inspect.LockEntry{Node: node, Role: inspect.RoleWaiter, Watching: watching, Age: -1}
}

func TestHerdWatchers(t *testing.T) {
	holder := inspect.LockEntry{Node: "n0", Role: inspect.RoleHolder, Age: time.Second}
	tests := []struct {
		name      string
		lock      inspect.Lock
		want      int
		wantKnown bool
	}{
		{"fair: each waiter watches its predecessor", inspect.Lock{Entries: []inspect.LockEntry{
			holder, waiter("n1", "n0"), waiter("n2", "n1"), waiter("n3", "n2")}}, 1, true},
		{"herd: every waiter watches the holder", inspect.Lock{Entries: []inspect.LockEntry{
			holder, waiter("n1", "n0"), waiter("n2", "n0"), waiter("n3", "n0")}}, 3, true},
		{"herd lock: sessions on its one node", inspect.Lock{Entries: []inspect.LockEntry{
			{Node: "lock", Role: inspect.RoleHolder}, waiter("", "lock"), waiter("", "lock")}}, 2, true},
		{"child watches", inspect.Lock{Entries: []inspect.LockEntry{holder,
			{Node: "n1", Role: inspect.RoleWaiter, Watch: inspect.WatchChild},
			{Node: "n2", Role: inspect.RoleWaiter, Watch: inspect.WatchChild}}}, 2, true},
		{"free lock", inspect.Lock{}, 0, true},
		{"every waiter newer than the watch lists: not 0", inspect.Lock{Entries: []inspect.LockEntry{holder,
			{Node: "n1", Role: inspect.RoleWaiter, Watch: inspect.WatchExpected},
			{Node: "n2", Role: inspect.RoleWaiter, Watch: inspect.WatchExpected}}}, 0, false},
		{"the waiters the lists speak for", inspect.Lock{Entries: []inspect.LockEntry{holder,
			{Node: "n1", Role: inspect.RoleWaiter, Watch: inspect.WatchConfirmed, Watching: []string{"n0"}},
			{Node: "n2", Role: inspect.RoleWaiter, Watch: inspect.WatchExpected}}}, 1, true},
		{"watch lists unknown: not 0", inspect.Lock{WatchUnknown: true, Entries: []inspect.LockEntry{
			holder, waiter("n1")}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, known := HerdWatchers(&tt.lock)
			if got != tt.want || known != tt.wantKnown {
				t.Errorf("HerdWatchers = %d, %v; want %d, %v", got, known, tt.want, tt.wantKnown)
			}
		})
	}
}

// TestInspectorFoldsPaths: beyond --metrics-max-paths, locks and queues are
// summed into one "(other)" series, and a metric says how many.
func TestInspectorFoldsPaths(t *testing.T) {
	reg := prometheus.NewRegistry()
	x, err := NewInspector(reg, 2)
	if err != nil {
		t.Fatal(err)
	}
	snap := &inspect.Snapshot{Cluster: inspect.Cluster{Members: []inspect.Member{
		{Addr: "127.0.0.1:2181", Up: true, LatencyAvg: 2}, {Addr: "127.0.0.1:2182"}, {Addr: "127.0.0.1:2183", Pending: true}}}}
	for i, n := range []int{5, 1, 3, 2} {
		entries := []inspect.LockEntry{{Node: "h", Role: inspect.RoleHolder, Age: time.Duration(i+1) * time.Minute}}
		for range n {
			entries = append(entries, waiter("w", "h"))
		}
		snap.Locks = append(snap.Locks, inspect.Lock{Path: "/locks/" + string(rune('a'+i)), Layout: "zkherd", Entries: entries})
	}
	snap.Queues = []inspect.Queue{{Path: "/q/a", Depth: 4, HeadAge: time.Second}, {Path: "/q/b", Depth: 0, HeadAge: -1}}
	x.Update(snap, 10*time.Millisecond)
	want := `
# HELP zkherd_lock_waiters Contenders waiting for the lock directory (for a herd lock: sessions watching its node).
# TYPE zkherd_lock_waiters gauge
zkherd_lock_waiters{layout="mixed",path="(other)"} 3
zkherd_lock_waiters{layout="zkherd",path="/locks/a"} 5
zkherd_lock_waiters{layout="zkherd",path="/locks/c"} 3
# HELP zkherd_lock_holder_age_seconds Age of the oldest holder's node; absent when the lock is free or the age unknown.
# TYPE zkherd_lock_holder_age_seconds gauge
zkherd_lock_holder_age_seconds{path="(other)"} 240
zkherd_lock_holder_age_seconds{path="/locks/a"} 60
zkherd_lock_holder_age_seconds{path="/locks/c"} 180
# HELP zkherd_server_up Whether the ensemble member answered the inspector's last poll (absent until its first poll ends).
# TYPE zkherd_server_up gauge
zkherd_server_up{member="127.0.0.1:2181"} 1
zkherd_server_up{member="127.0.0.1:2182"} 0
# HELP zkherd_queue_head_age_seconds Age of the queue's oldest item; absent when the queue is empty or the age unknown.
# TYPE zkherd_queue_head_age_seconds gauge
zkherd_queue_head_age_seconds{path="/q/a"} 1
`
	names := []string{"zkherd_lock_waiters", "zkherd_lock_holder_age_seconds", "zkherd_server_up", "zkherd_queue_head_age_seconds"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	folded := `
# HELP zkherd_exporter_paths_folded Lock or queue directories beyond the limit of path label values per kind, summed into the path "(other)" (waiters and depths added, ages, read ages and herd watchers the largest).
# TYPE zkherd_exporter_paths_folded gauge
zkherd_exporter_paths_folded{kind="lock"} 2
zkherd_exporter_paths_folded{kind="queue"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(folded), "zkherd_exporter_paths_folded"); err != nil {
		t.Error(err)
	}
}

// TestInspectorSaysReadAge: a still directory is read less often
// (inspect/still.go), so each lock and queue says how long ago it was read,
// at the scrape: a lock read 40 s before the snapshot is 40 s old or more,
// one read for the snapshot as old as the snapshot, and the "(other)"
// series as old as its oldest.
func TestInspectorSaysReadAge(t *testing.T) {
	reg := prometheus.NewRegistry()
	x, err := NewInspector(reg, 1)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-10 * time.Second)
	holder := []inspect.LockEntry{{Node: "h", Role: inspect.RoleHolder, Age: time.Minute}}
	snap := &inspect.Snapshot{At: at, Locks: []inspect.Lock{
		{Path: "/locks/fresh", Entries: append(holder, waiter("w", "h"), waiter("w2", "h")), ReadAt: at.Add(time.Millisecond)},
		{Path: "/locks/still", Entries: holder, ReadAt: at.Add(-40 * time.Second)},
	}, Queues: []inspect.Queue{{Path: "/q", Depth: 1, HeadAge: -1, ReadAt: at.Add(-30 * time.Second)}}}
	x.Update(snap, time.Millisecond)
	ages := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if name := f.GetName(); name == "zkherd_lock_read_age_seconds" || name == "zkherd_queue_read_age_seconds" {
			for _, m := range f.GetMetric() {
				ages[name+" "+m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	for series, bounds := range map[string][2]float64{
		"zkherd_lock_read_age_seconds /locks/fresh": {9.9, 60},
		"zkherd_lock_read_age_seconds (other)":      {50, 100},
		"zkherd_queue_read_age_seconds /q":          {40, 90},
	} {
		if v, ok := ages[series]; !ok || v < bounds[0] || v > bounds[1] {
			t.Errorf("%s = %v (present %v), want %v-%v s; all: %v", series, v, ok, bounds[0], bounds[1], ages)
		}
	}
}

// TestInspectorSaysScanInProgress: while the first walk of the tree runs
// (paced: minutes on a large tree), the locks exported are those found so
// far: the scrape says the walk is not complete and how far it has got,
// and the progress is gone once it has ended.
func TestInspectorSaysScanInProgress(t *testing.T) {
	reg := prometheus.NewRegistry()
	x, err := NewInspector(reg, 0)
	if err != nil {
		t.Fatal(err)
	}
	x.Update(&inspect.Snapshot{Scanning: true, ScanRead: 412}, time.Millisecond)
	want := `
# HELP zkherd_inspector_scan_complete 1 once the inspector's first walk of the tree ended: before, a lock or queue absent may just not be found yet.
# TYPE zkherd_inspector_scan_complete gauge
zkherd_inspector_scan_complete 0
# HELP zkherd_inspector_scan_directories_read Directories the first walk of the tree has read so far, while zkherd_inspector_scan_complete is 0 (the walk is paced: minutes on a large tree).
# TYPE zkherd_inspector_scan_directories_read gauge
zkherd_inspector_scan_directories_read 412
`
	names := []string{"zkherd_inspector_scan_complete", "zkherd_inspector_scan_directories_read"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	x.Update(&inspect.Snapshot{}, time.Millisecond)
	done := `
# HELP zkherd_inspector_scan_complete 1 once the inspector's first walk of the tree ended: before, a lock or queue absent may just not be found yet.
# TYPE zkherd_inspector_scan_complete gauge
zkherd_inspector_scan_complete 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(done), names...); err != nil {
		t.Error(err)
	}
}

// TestLoadHistogramHoldsTheRunsValues: the latency histogram gets every
// value of every interval the recorder closes, so its count is the
// HdrHistogram's, and its sum is theirs within HdrHistogram's 0.1%.
func TestLoadHistogramHoldsTheRunsValues(t *testing.T) {
	reg := prometheus.NewRegistry()
	l, err := NewLoad(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := hdrhistogram.New(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	var sum float64
	for i := 1; i <= 5000; i++ {
		us := int64(i * 37)
		_ = h.RecordValue(us)
		sum += float64(us) / 1e6
	}
	packed := hdrhistogram.NewPacked(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	packed.MergeFrom(h)
	l.apply(loadrun.EventStarting{Run: scenarios.Run{Spec: scenarios.Spec{Name: "fair", Recipe: scenarios.FairLock, Clients: 3}}})
	l.apply(loadrun.EventInterval{Run: "fair", Phase: "acquire", Values: loadrun.IntervalValues(&metrics.PhaseInterval{Raw: packed, Corrected: packed})})
	l.apply(loadrun.EventProgress{Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, RunID: "r1", Ops: 5000, Clients: 3,
		SessionsConnected: 2, Totals: figures.Totals{figures.Releases: 7, figures.Wakeups: 7}, ErrorsByKind: map[string]int64{"connection loss": 2},
		Checks: loadgen.LiveChecks(map[string]int64{"fifo": 0})}})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, mf := range mfs {
		found[mf.GetName()] = true
		if mf.GetName() != "zkherd_latency_seconds" {
			continue
		}
		hist := mf.GetMetric()[0].GetHistogram()
		if hist.GetSampleCount() != 5000 {
			t.Errorf("histogram count = %d, want 5000", hist.GetSampleCount())
		}
		if got := hist.GetSampleSum(); got < sum*0.999 || got > sum*1.001 {
			t.Errorf("histogram sum = %v, want %v within 0.1%%", got, sum)
		}
		if len(hist.GetBucket()) != len(LatencyBuckets) {
			t.Errorf("classic buckets = %d, want %d", len(hist.GetBucket()), len(LatencyBuckets))
		}
		if hist.GetSchema() == 0 && hist.GetZeroThreshold() == 0 {
			t.Errorf("no native histogram alongside the classic buckets")
		}
	}
	for _, name := range []string{"zkherd_operations_total", "zkherd_errors_total", "zkherd_clients_connected",
		"zkherd_wakeups_per_release", "zkherd_check_violations_total", "zkherd_run_info", "zkherd_latency_seconds"} {
		if !found[name] {
			t.Errorf("%s not exported", name)
		}
	}
}

// TestOperationsCoverTheRun: once the window opens the generator counts
// the ramp-up's operations apart; the counter adds them back, and never
// goes down (a dip would read as a counter reset).
func TestOperationsCoverTheRun(t *testing.T) {
	reg := prometheus.NewRegistry()
	l, err := NewLoad(reg)
	if err != nil {
		t.Fatal(err)
	}
	want := func(v int) {
		t.Helper()
		exp := fmt.Sprintf("# HELP zkherd_operations_total %s\n# TYPE zkherd_operations_total counter\nzkherd_operations_total{scenario=\"fair\"} %d\n",
			"Operations completed over the whole run (acquisitions, items, elections...): report.json's operations plus its ramp-up's.", v)
		if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "zkherd_operations_total"); err != nil {
			t.Error(err)
		}
	}
	l.apply(loadrun.EventProgress{Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, Ops: 12}})
	want(12)
	l.apply(loadrun.EventProgress{Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, Ops: 3, RampOps: 12}})
	want(15)
	l.apply(loadrun.EventProgress{Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, Ops: 0, RampOps: 12}})
	want(15)
}

// TestEndedChecks: once the run ends the endpoint's checks are its
// report's: the linearizability verdict and the thresholds join the live
// checks, and a check that could not be made has no series (not 0).
func TestEndedChecks(t *testing.T) {
	reg := prometheus.NewRegistry()
	l, err := NewLoad(reg)
	if err != nil {
		t.Fatal(err)
	}
	th, err := scenarios.ParseThreshold("errors<1")
	if err != nil {
		t.Fatal(err)
	}
	run := scenarios.Run{Spec: scenarios.Spec{Name: "fair", Recipe: scenarios.FairLock, Clients: 3, Thresholds: []scenarios.Threshold{th}}}
	l.apply(loadrun.EventStarting{Run: run})
	l.apply(loadrun.EventProgress{Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock,
		Checks: loadgen.LiveChecks(map[string]int64{"mutual_exclusion": 0, "fencing": 0})}})
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	res := &loadgen.Result{Run: run, WindowStart: t0, Stop: t0.Add(time.Second),
		Checks: loadgen.Checks{MutualExclusionViolations: 2, LeftoverZnodes: -1, FIFOChecked: true},
		Linearizability: &oracle.Result{Model: "mutex", Result: oracle.ResultViolation,
			Violation: &oracle.Violation{Partition: "/l", Detail: "two holders"}}}
	l.apply(loadrun.EventEnded{Outcome: loadrun.Outcome{Results: []*loadgen.Result{res}}})
	exp := `# HELP zkherd_check_violations_total ` + descHelp(descViolations) + `
# TYPE zkherd_check_violations_total counter
zkherd_check_violations_total{check="fencing",scenario="fair"} 0
zkherd_check_violations_total{check="fifo",scenario="fair"} 0
zkherd_check_violations_total{check="linearizability",scenario="fair"} 1
zkherd_check_violations_total{check="mutual_exclusion",scenario="fair"} 2
zkherd_check_violations_total{check="threshold:errors<1",scenario="fair"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "zkherd_check_violations_total"); err != nil {
		t.Error(err)
	}
}

// descHelp is d's help text.
func descHelp(d *prometheus.Desc) string {
	s := d.String()
	i := strings.Index(s, `help: "`) + len(`help: "`)
	return s[i : i+strings.Index(s[i:], `"`)]
}
