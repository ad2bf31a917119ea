package loadgen

import (
	"math"
	rtmetrics "runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestHistQuantile(t *testing.T) {
	buckets := []float64{0, 0.001, 0.01, 0.1, math.Inf(1)}
	hist := func(counts ...uint64) rtmetrics.Float64Histogram {
		return rtmetrics.Float64Histogram{Counts: counts, Buckets: buckets}
	}
	tests := []struct {
		name          string
		before, after rtmetrics.Float64Histogram
		q             float64
		want          time.Duration
	}{
		{"nothing new", hist(5, 5, 5, 5), hist(5, 5, 5, 5), 0.99, 0},
		{"all fast", hist(0, 0, 0, 0), hist(100, 0, 0, 0), 0.99, time.Millisecond},
		{"only the difference counts", hist(0, 0, 1000, 0), hist(100, 0, 1000, 0), 0.99, time.Millisecond},
		{"one percent slow", hist(0, 0, 0, 0), hist(98, 0, 2, 0), 0.99, 100 * time.Millisecond},
		{"overflow bucket reads its lower edge", hist(0, 0, 0, 0), hist(0, 0, 0, 3), 0.5, 100 * time.Millisecond},
		{"mismatched readings", hist(1), hist(1, 2, 3, 4), 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := histQuantile(tt.before, tt.after, tt.q); got != tt.want {
				t.Errorf("histQuantile = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGeneratorBehind(t *testing.T) {
	tests := []struct {
		name              string
		intervals, behind int
		want              bool
	}{
		{"never", 20, 0, false},
		{"a stampede's first second", 20, 1, false},
		{"a quarter", 20, 5, true},
		{"all", 3, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := selfWatch{window: readSelfLoad(), intervals: tt.intervals, behind: tt.behind}
			g := w.result(readSelfLoad())
			if g.Behind != tt.want {
				t.Errorf("Behind = %v for %d of %d intervals, want %v", g.Behind, tt.behind, tt.intervals, tt.want)
			}
			if g.Behind && !strings.Contains(g.note(nil), "fell behind") {
				t.Errorf("note %q does not say the generator fell behind", g.note(nil))
			}
		})
	}
}

// TestGeneratorNoteUnits: the note writes its wait by zkherd's one
// latency rule (format.Duration: 200us, 1.23ms), as the summary's table
// does, not Go's "200µs" or "1.2345ms".
func TestGeneratorNoteUnits(t *testing.T) {
	for _, tt := range []struct {
		wait time.Duration
		want string
	}{
		{200 * time.Microsecond, "waited 200us (p99)"},
		{1234567 * time.Nanosecond, "waited 1.23ms (p99)"},
	} {
		g := Generator{CPUShare: 0.04, SchedP99: tt.wait, Intervals: 2, IntervalsBehind: 1, Behind: true}
		if got := g.note(nil); !strings.Contains(got, tt.want) {
			t.Errorf("note %q lacks %q", got, tt.want)
		}
	}
}
