package metrics

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// An Interval is what Rotate returns: the values and counters of one
// interval. Its histograms belong to the caller.
type Interval struct {
	Start, End time.Time
	// Phases holds the phases that had values (or anomalies) in the interval.
	Phases map[Phase]*PhaseInterval
	// Counts are the counters' increments during the interval; the
	// SessionsAlive gauge is its value at End.
	Counts Counts
	// UnknownPhase counts values recorded under a phase the recorder was
	// not built with; they are lost.
	UnknownPhase int64
}

// empty reports whether nothing happened in the interval.
func (iv *Interval) empty() bool {
	c := iv.Counts
	return len(iv.Phases) == 0 && iv.UnknownPhase == 0 && c.Ops == 0 && c.Errors == 0 && c.Wakeups == 0 &&
		c.ZKRequests == 0
}

// PhaseInterval holds one phase's values of one interval.
type PhaseInterval struct {
	// Raw holds the values as measured, Corrected the values corrected for
	// coordinated omission. Corrected is Raw when nothing in the interval was
	// recorded with RecordCorrected.
	Raw, Corrected *hdrhistogram.PackedHistogram
	// HasCorrection reports whether RecordCorrected was used in the interval.
	HasCorrection bool
	Anomalies
}

// IntervalStats are the few figures of an interval a timeline plots; a
// Result keeps one per interval.
type IntervalStats struct {
	Start, End   time.Time
	Counts       Counts
	Phases       map[Phase]PhasePoint
	UnknownPhase int64
}

// Seconds returns the interval's length in seconds.
func (s IntervalStats) Seconds() float64 { return s.End.Sub(s.Start).Seconds() }

// PhasePoint sums up one phase in one interval. Latencies are milliseconds.
type PhasePoint struct {
	Count                                    int64
	P50, P90, P99, Max                       float64
	CorrectedP50, CorrectedP99, CorrectedMax float64
	// HasCorrection says whether the corrected figures differ from the raw
	// ones (something was recorded with RecordCorrected or RecordIntended).
	HasCorrection             bool
	OverRange, LostOrNegative int64
}

func pointOf(pi *PhaseInterval) PhasePoint {
	q := pi.Raw.ValueAtPercentilesSlice([]float64{50, 90, 99})
	return PhasePoint{
		Count:          pi.Raw.TotalCount(),
		P50:            usToMs(q[0]),
		P90:            usToMs(q[1]),
		P99:            usToMs(q[2]),
		Max:            maxMs(pi.Raw),
		CorrectedP50:   usToMs(pi.Corrected.ValueAtPercentile(50)),
		CorrectedP99:   usToMs(pi.Corrected.ValueAtPercentile(99)),
		CorrectedMax:   maxMs(pi.Corrected),
		HasCorrection:  pi.HasCorrection,
		OverRange:      pi.OverRange,
		LostOrNegative: pi.Negative + pi.RecordErrors + pi.MergeDropped,
	}
}
