package metrics

import (
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// What a live view (the load dashboard) reads while a run goes on.

// Bucket counts latencies in (the previous bucket's UpTo, UpTo].
type Bucket struct {
	UpTo  time.Duration
	Count int64
}

// Buckets returns phase p's latencies so far in power-of-two buckets
// (1 us, 2 us, 4 us...), the empty ones left out: a log-scaled histogram.
// It is nil for a phase with no values. Its cost is one pass over the
// histogram's buckets (a few thousand at 3 significant digits), whatever
// the number of values.
func (r *Recorder) Buckets(p Phase) []Bucket {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.index[p]
	if !ok || r.acc[i] == nil {
		return nil
	}
	return LogBuckets(r.acc[i].totRaw, time.Microsecond)
}

// LogBuckets sums h (values in unit) into power-of-two buckets.
func LogBuckets(h *hdrhistogram.Histogram, unit time.Duration) []Bucket {
	if h.TotalCount() == 0 {
		return nil
	}
	var out []Bucket
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		upTo := int64(1)
		if bar.To > 1 {
			upTo = int64(1) << int(math.Ceil(math.Log2(float64(bar.To))))
		}
		d := time.Duration(upTo) * unit
		if n := len(out); n > 0 && out[n-1].UpTo == d {
			out[n-1].Count += bar.Count
			continue
		}
		out = append(out, Bucket{UpTo: d, Count: bar.Count})
	}
	return out
}

// Timeline returns the intervals closed so far, oldest first (their Phases
// maps are shared and never modified).
func (r *Recorder) Timeline() []IntervalStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.intervals)
}
