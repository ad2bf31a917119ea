package metrics

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/zkherd/zkherd/internal/golden"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 500_000_000, time.UTC)

func newTestRecorder(t testing.TB, opts ...Option) *Recorder {
	t.Helper()
	r, err := NewRecorder(t0, opts...)
	if err != nil {
		t.Fatalf("NewRecorder: %v", err)
	}
	return r
}

func reference(highest time.Duration) *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestTrackable, highest.Microseconds(), SignificantFigures)
}

func checkGolden(t *testing.T, got []byte) {
	t.Helper()
	golden.Check(t, got)
}

func TestGeometryMatchesLibrary(t *testing.T) {
	tests := []struct {
		name    string
		lowest  int64
		highest int64
		sig     int
	}{
		{"default", 1, DefaultHighest.Microseconds(), 3},
		{"one minute", 1, time.Minute.Microseconds(), 3},
		{"two digits", 1, 3_600_000_000, 2},
		{"lowest 1000", 1000, 3_600_000_000_000, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hdrhistogram.New(tt.lowest, tt.highest, tt.sig)
			var buf bytes.Buffer
			if _, err := h.PercentilesPrint(&buf, 5, 1); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			g := newGeometryOf(tt.lowest, tt.highest, tt.sig)
			got := fmt.Sprintf("#[Buckets = %12d, SubBuckets     = %12d]", g.bucketCount, g.subBucketCount)
			if want := lines[len(lines)-1]; got != want {
				t.Errorf("trailer: got %q, want %q", got, want)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20000 {
				v := rng.Int64N(tt.highest) + 1
				low := g.lowestEquivalent(v)
				if !h.ValuesAreEquivalent(v, low) {
					t.Fatalf("lowestEquivalent(%d) = %d: not in the same bucket", v, low)
				}
				if low > 0 && h.ValuesAreEquivalent(v, low-1) {
					t.Fatalf("lowestEquivalent(%d) = %d: %d is in the same bucket too", v, low, low-1)
				}
			}
		})
	}
}

func TestNewRecorderRejects(t *testing.T) {
	tests := []struct {
		name string
		opt  Option
	}{
		{"highest below 1ms", WithHighest(time.Microsecond)},
		{"phase with a space", WithPhases("my phase")},
		{"phase with a comma", WithPhases("a,b")},
		{"empty phase", WithPhases("")},
		{"upper case phase", WithPhases("Acquire")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewRecorder(t0, tt.opt); err == nil {
				t.Errorf("NewRecorder: got no error, want one")
			}
		})
	}
}

// TestShardingEqualsOneHistogram records the same values through several
// shards and rotations and into one reference histogram: the totals must be
// identical.
func TestShardingEqualsOneHistogram(t *testing.T) {
	tests := []struct {
		name      string
		shards    int
		rotations int
		values    int
	}{
		{"one shard one interval", 1, 1, 1000},
		{"eight shards", 8, 5, 20000},
		{"sixty-four shards", 64, 3, 50000},
		{"spilling one shard", 1, 2, 50000},
	}
	phases := []Phase{Acquire, Create, Handoff}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRecorder(t)
			shards := make([]*Shard, tt.shards)
			for i := range shards {
				shards[i] = r.NewShard()
			}
			want := map[Phase]*hdrhistogram.Histogram{}
			for _, p := range phases {
				want[p] = reference(DefaultHighest)
			}
			rng := rand.New(rand.NewPCG(7, 11))
			now := t0
			var intervalTotal int64
			for i := range tt.values {
				p := phases[rng.IntN(len(phases))]
				us := int64(rng.ExpFloat64()*5000) + rng.Int64N(3)
				shards[rng.IntN(len(shards))].Record(p, time.Duration(us)*time.Microsecond)
				if err := want[p].RecordValue(us); err != nil {
					t.Fatal(err)
				}
				if (i+1)%(tt.values/tt.rotations) == 0 {
					now = now.Add(time.Second)
					for _, pi := range r.Rotate(now).Phases {
						intervalTotal += pi.Raw.TotalCount()
					}
				}
			}
			res := r.Finish(now.Add(time.Second))
			for _, pt := range res.Intervals[len(res.Intervals)-1].Phases {
				intervalTotal += pt.Count
			}
			for _, p := range phases {
				got := res.Totals[p]
				if got == nil {
					t.Fatalf("phase %s: no totals", p)
				}
				if !got.Raw.Equals(want[p]) {
					t.Errorf("phase %s: merged raw histogram differs from the reference (count %d, want %d)",
						p, got.Raw.TotalCount(), want[p].TotalCount())
				}
				if !got.Corrected.Equals(want[p]) {
					t.Errorf("phase %s: corrected histogram without corrections differs from raw", p)
				}
				if got.Anomalies.Any() {
					t.Errorf("phase %s: anomalies %+v, want none", p, got.Anomalies)
				}
			}
			if intervalTotal != int64(tt.values) {
				t.Errorf("sum of interval counts: got %d, want %d", intervalTotal, tt.values)
			}
		})
	}
}

func TestCorrectedMatchesLibrary(t *testing.T) {
	tests := []struct {
		name     string
		value    time.Duration
		expected time.Duration
	}{
		{"no stall", 500 * time.Microsecond, time.Millisecond},
		{"equal to interval", time.Millisecond, time.Millisecond},
		{"short stall", 25 * time.Millisecond, time.Millisecond},
		{"one second at 1ms", time.Second, time.Millisecond},
		{"one minute at 1ms", time.Minute, time.Millisecond},
		{"ten minutes at 100us", 10 * time.Minute, 100 * time.Microsecond},
		{"odd interval", 7*time.Second + 3*time.Microsecond, 1234 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRecorder(t)
			r.NewShard().RecordCorrected(Acquire, tt.value, tt.expected)
			res := r.Finish(t0.Add(time.Second))
			want := reference(DefaultHighest)
			if err := want.RecordCorrectedValue(tt.value.Microseconds(), tt.expected.Microseconds()); err != nil {
				t.Fatal(err)
			}
			got := res.Totals[Acquire]
			if !got.Corrected.Equals(want) {
				t.Errorf("corrected: count %d p50 %d, want count %d p50 %d", got.Corrected.TotalCount(),
					got.Corrected.ValueAtPercentile(50), want.TotalCount(), want.ValueAtPercentile(50))
			}
			if got.Raw.TotalCount() != 1 {
				t.Errorf("raw count: got %d, want 1", got.Raw.TotalCount())
			}
			if !got.HasCorrection {
				t.Errorf("HasCorrection: got false, want true")
			}
		})
	}
}

// TestSpillKeepsCorrections records more corrected values in one interval
// than a shard buffers, so most go through its spill histograms.
func TestSpillKeepsCorrections(t *testing.T) {
	r := newTestRecorder(t)
	s := r.NewShard()
	want := reference(DefaultHighest)
	wantRaw := reference(DefaultHighest)
	for i := range 3*spillAt + 17 {
		d := time.Duration(500+i%3000) * time.Microsecond
		if i%2 == 0 {
			s.RecordCorrected(Acquire, d, time.Millisecond)
			want.RecordCorrectedValue(d.Microseconds(), 1000)
		} else {
			s.Record(Acquire, d)
			want.RecordValue(d.Microseconds())
		}
		wantRaw.RecordValue(d.Microseconds())
	}
	res := r.Finish(t0.Add(time.Second))
	got := res.Totals[Acquire]
	if !got.Raw.Equals(wantRaw) {
		t.Errorf("raw: count %d, want %d", got.Raw.TotalCount(), wantRaw.TotalCount())
	}
	if !got.Corrected.Equals(want) {
		t.Errorf("corrected: count %d, want %d", got.Corrected.TotalCount(), want.TotalCount())
	}
	if !got.HasCorrection {
		t.Errorf("HasCorrection: got false, want true")
	}
}

// TestCorrectedVersusRaw models a closed generator meant to start an
// operation every millisecond that stalls once for a second: the raw
// distribution hides the stall, the corrected one shows it.
func TestCorrectedVersusRaw(t *testing.T) {
	r := newTestRecorder(t)
	s := r.NewShard()
	for range 10000 {
		s.RecordCorrected(Acquire, 800*time.Microsecond, time.Millisecond)
	}
	s.RecordCorrected(Acquire, time.Second, time.Millisecond)
	got := r.Finish(t0.Add(11 * time.Second)).Summary(Acquire)

	if got.P99 > 1 {
		t.Errorf("raw p99: got %vms, want at most 1ms", got.P99)
	}
	// 999 synthesized values from 1ms to 999ms join 10,001 real ones: the
	// top 1% starts near 890ms.
	if got.CorrectedP99 < 800 {
		t.Errorf("corrected p99: got %vms, want above 800ms", got.CorrectedP99)
	}
	if got.Count != 10001 || got.CorrectedCount != 11000 {
		t.Errorf("counts: got raw %d corrected %d, want 10001 and 11000", got.Count, got.CorrectedCount)
	}
}

func TestAnomaliesAreCounted(t *testing.T) {
	r := newTestRecorder(t, WithHighest(time.Minute))
	s := r.NewShard()
	s.Record(Acquire, 90*time.Second)
	s.Record(Acquire, time.Hour)
	s.Record(Acquire, -time.Millisecond)
	s.Record(Acquire, time.Millisecond)
	s.Record("no_such_phase", time.Millisecond)
	iv := r.Rotate(t0.Add(time.Second))
	res := r.Finish(t0.Add(2 * time.Second))

	if got, want := iv.UnknownPhase, int64(1); got != want {
		t.Errorf("interval unknown phase: got %d, want %d", got, want)
	}
	if got, want := res.UnknownPhase, int64(1); got != want {
		t.Errorf("result unknown phase: got %d, want %d", got, want)
	}
	got := res.Summary(Acquire)
	want := Anomalies{OverRange: 2, Negative: 1}
	if got.Anomalies != want {
		t.Errorf("anomalies: got %+v, want %+v", got.Anomalies, want)
	}
	if got.Count != 4 {
		t.Errorf("count: got %d, want 4 (clamped values are recorded)", got.Count)
	}
	if got.Max < 59999 || got.Max > 60100 {
		t.Errorf("max: got %vms, want the highest trackable value, about 60000ms", got.Max)
	}
	if p := res.Totals[Acquire].Raw.ValueAtPercentile(0); p != 0 {
		t.Errorf("min: got %dus, want 0 (negative recorded as zero)", p)
	}
}

func TestIntervalsAndCounters(t *testing.T) {
	r := newTestRecorder(t)
	s := r.NewShard()
	r.AddSessions(3)
	s.Record(Hold, 10*time.Millisecond)
	r.AddOps(5)
	r.AddError("timeout")
	r.AddWakeups(7)
	r.AddZKRequests(20)
	iv1 := r.Rotate(t0.Add(time.Second))

	r.AddSessions(-1)
	r.AddOps(2)
	r.AddError("timeout")
	r.AddError("connection_loss")
	iv2 := r.Rotate(t0.Add(2 * time.Second))
	res := r.Finish(t0.Add(2500 * time.Millisecond))

	tests := []struct {
		name      string
		got, want Counts
	}{
		{"first interval", iv1.Counts, Counts{Ops: 5, Errors: 1, ErrorsByKind: map[string]int64{"timeout": 1},
			Wakeups: 7, ZKRequests: 20, SessionsAlive: 3}},
		{"second interval", iv2.Counts, Counts{Ops: 2, Errors: 2,
			ErrorsByKind: map[string]int64{"timeout": 1, "connection_loss": 1}, SessionsAlive: 2}},
		{"totals", res.Counts, Counts{Ops: 7, Errors: 3,
			ErrorsByKind: map[string]int64{"timeout": 2, "connection_loss": 1}, Wakeups: 7, ZKRequests: 20,
			SessionsAlive: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", tt.got, tt.want)
			}
		})
	}
	if got, want := len(res.Intervals), 3; got != want {
		t.Fatalf("intervals: got %d, want %d", got, want)
	}
	if got := res.Intervals[1].Start; !got.Equal(t0.Add(time.Second)) {
		t.Errorf("second interval start: got %v, want %v", got, t0.Add(time.Second))
	}
	if got := res.Intervals[2].Seconds(); got != 0.5 {
		t.Errorf("last interval length: got %vs, want 0.5s", got)
	}
	if got := iv1.Phases[Hold].Raw.TotalCount(); got != 1 {
		t.Errorf("first interval hold count: got %d, want 1", got)
	}
	if _, ok := iv2.Phases[Hold]; ok {
		t.Errorf("second interval: got a hold phase, want none (nothing recorded)")
	}
	if got := res.Intervals[0].Phases[Hold].P50; got != 10.007 {
		t.Errorf("first interval hold p50: got %vms, want 10.007ms", got)
	}
}

// TestRotateUnderConcurrentRecording records from several goroutines while
// the test rotates as fast as it can: no value may be lost or counted twice.
func TestRotateUnderConcurrentRecording(t *testing.T) {
	const workers, perWorker = 8, 20000
	r := newTestRecorder(t)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range workers {
		s := r.NewShard()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				s.Record(Acquire, time.Duration(w*perWorker+i)*time.Microsecond)
				if i%3 == 0 {
					s.RecordCorrected(Handoff, 5*time.Millisecond, time.Millisecond)
				}
				r.AddOps(1)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()

	now := t0
	var fromIntervals, ops int64
	rotations := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		now = now.Add(time.Second)
		iv := r.Rotate(now)
		rotations++
		if pi, ok := iv.Phases[Acquire]; ok {
			fromIntervals += pi.Raw.TotalCount()
		}
		ops += iv.Counts.Ops
	}
	res := r.Finish(now.Add(time.Second))
	for _, st := range res.Intervals[len(res.Intervals)-1:] {
		fromIntervals += st.Phases[Acquire].Count
		ops += st.Counts.Ops
	}

	want := int64(workers * perWorker)
	if got := res.Totals[Acquire].Raw.TotalCount(); got != want {
		t.Errorf("total acquire count: got %d, want %d", got, want)
	}
	if fromIntervals != want {
		t.Errorf("sum of interval acquire counts: got %d, want %d", fromIntervals, want)
	}
	if ops != want || res.Counts.Ops != want {
		t.Errorf("ops: got %d in intervals and %d in total, want %d", ops, res.Counts.Ops, want)
	}
	// Each corrected handoff of 5ms at 1ms adds 4 values.
	handoffs := int64(workers * ((perWorker + 2) / 3))
	if got := res.Totals[Handoff].Corrected.TotalCount(); got != 5*handoffs {
		t.Errorf("corrected handoff count: got %d, want %d", got, 5*handoffs)
	}
	if got := res.Totals[Acquire].Raw.Max(); got < want-1 {
		t.Errorf("acquire max: got %dus, want about %dus", got, want-1)
	}
	t.Logf("%d rotations", rotations)
}

func TestSpectrum(t *testing.T) {
	tests := []struct {
		name      string
		values    int
		wantLast  float64
		wantFirst float64
	}{
		{"empty", 0, 0, 0},
		{"one value", 1, 0, 1},
		{"ten values", 10, 90, 1},
		{"a million values", 1_000_000, 99.9999, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := reference(DefaultHighest)
			for i := range tt.values {
				h.RecordValue(int64(i+1) * 1000 / int64(tt.values))
			}
			pts := Spectrum(h)
			if tt.values == 0 {
				if pts != nil {
					t.Errorf("got %v, want nil", pts)
				}
				return
			}
			last := pts[len(pts)-1]
			if last.Percentile != tt.wantLast {
				t.Errorf("last percentile: got %v, want %v", last.Percentile, tt.wantLast)
			}
			if last.Ms != float64(h.Max())/1000 {
				t.Errorf("last value: got %vms, want the max %vms", last.Ms, float64(h.Max())/1000)
			}
			for i := 1; i < len(pts); i++ {
				if pts[i].Percentile <= pts[i-1].Percentile || pts[i].Ms < pts[i-1].Ms {
					t.Fatalf("points %d and %d not increasing: %v %v", i-1, i, pts[i-1], pts[i])
				}
			}
			if len(pts) > 52 {
				t.Errorf("got %d points, want at most 52", len(pts))
			}
		})
	}
}

func TestFinishAfterRotateAtTheSameTime(t *testing.T) {
	tests := []struct {
		name          string
		recordBetween bool
		wantIntervals int
	}{
		{"nothing in between", false, 1},
		{"a value in between", true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRecorder(t)
			s := r.NewShard()
			s.Record(Hold, time.Millisecond)
			end := t0.Add(time.Second)
			r.Rotate(end)
			if tt.recordBetween {
				s.Record(Hold, time.Millisecond)
			}
			res := r.Finish(end)
			if got := len(res.Intervals); got != tt.wantIntervals {
				t.Errorf("intervals: got %d, want %d", got, tt.wantIntervals)
			}
			if got, want := res.Totals[Hold].Raw.TotalCount(), int64(len(res.Intervals)); got != want {
				t.Errorf("hold count: got %d, want %d", got, want)
			}
		})
	}
}

// An open-loop operation is recorded twice: its service time as raw and its
// latency from the intended start as corrected, nothing synthetic added, so
// no corrected percentile is below the raw one; past the buffer size the
// values go through the spill histograms the same way.
func TestRecordIntended(t *testing.T) {
	for _, n := range []int{100, 3 * 8192} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			start := time.Unix(0, 0)
			rec, err := NewRecorder(start)
			if err != nil {
				t.Fatal(err)
			}
			sh := rec.NewShard()
			for i := range n {
				service := time.Duration(1+i%10) * time.Millisecond
				late := time.Duration(0)
				if i%100 == 0 {
					late = 2 * time.Second // the schedule ran into a stall
				}
				sh.RecordIntended(Acquire, service, service+late)
			}
			res := rec.Finish(start.Add(time.Second))
			s := res.Summary(Acquire)
			if !s.HasCorrection || s.Count != int64(n) || s.CorrectedCount != int64(n) {
				t.Fatalf("got count %d corrected %d (has %v), want %d each", s.Count, s.CorrectedCount, s.HasCorrection, n)
			}
			if s.P99 > 10.1 || s.Max > 10.1 {
				t.Errorf("service p99 %v max %v: want at most 10ms", s.P99, s.Max)
			}
			if s.CorrectedMax < 2000 || s.CorrectedP99 < s.P99 || s.CorrectedP50 < s.P50 {
				t.Errorf("from intended start: p50 %v p99 %v max %v; want >= service (p50 %v p99 %v) and max >= 2s",
					s.CorrectedP50, s.CorrectedP99, s.CorrectedMax, s.P50, s.P99)
			}
		})
	}
}

// TestSplit: what was recorded before Split is its result, and Finish's
// holds only what followed (the ramp-up's figures apart from the
// window's); the intervals span both.
func TestSplit(t *testing.T) {
	start := time.Unix(1000, 0)
	r, err := NewRecorder(start)
	if err != nil {
		t.Fatal(err)
	}
	sh := r.NewShard()
	for range 10 {
		sh.Record(Acquire, 5*time.Second)
	}
	r.AddOps(10)
	ramp := r.Split(start.Add(time.Second))
	for range 4 {
		sh.Record(Acquire, time.Millisecond)
	}
	r.AddOps(4)
	win := r.Finish(start.Add(2 * time.Second))
	if got := ramp.Totals[Acquire].Raw.TotalCount(); got != 10 || ramp.Counts.Ops != 10 {
		t.Errorf("ramp: %d values, %d ops; want 10 and 10", got, ramp.Counts.Ops)
	}
	if got := win.Totals[Acquire].Raw.TotalCount(); got != 4 || win.Counts.Ops != 4 {
		t.Errorf("window: %d values, %d ops; want 4 and 4", got, win.Counts.Ops)
	}
	if max := win.Totals[Acquire].Raw.Max(); max > 2000 {
		t.Errorf("window max %d us: the ramp's 5 s values leaked in", max)
	}
	if len(win.Intervals) != 2 {
		t.Errorf("window result has %d intervals, want the ramp's and the window's", len(win.Intervals))
	}
}
