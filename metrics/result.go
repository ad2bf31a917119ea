package metrics

import (
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A Result is what a Recorder measured, returned by Finish: the totals per
// phase, the counters, a timeline of the intervals and the interval logs.
type Result struct {
	Start, End time.Time
	// Highest is the largest latency recorded as itself.
	Highest time.Duration
	Counts  Counts
	// Phases lists the phases with values, in the order of Phases().
	Phases []Phase
	Totals map[Phase]*PhaseTotal
	// Intervals has one entry per Rotate (and the final one of Finish).
	Intervals []IntervalStats
	// UnknownPhase counts values recorded under a phase the recorder was
	// not built with; they are lost.
	UnknownPhase int64

	logs map[Phase]phaseLog
	geom geometry
}

// PhaseTotal holds one phase's values over the whole run.
type PhaseTotal struct {
	// Raw holds the values as measured, Corrected adds the values
	// coordinated-omission correction synthesized (it equals Raw when
	// HasCorrection is false).
	Raw, Corrected *hdrhistogram.Histogram
	HasCorrection  bool
	Anomalies
}

// Duration returns the length of the run.
func (r *Result) Duration() time.Duration { return r.End.Sub(r.Start) }

// Summary sums up one phase; it is zero for a phase without values.
func (r *Result) Summary(p Phase) Summary {
	t, ok := r.Totals[p]
	if !ok {
		return Summary{}
	}
	s := Summarize(t.Raw, t.Corrected)
	s.HasCorrection = t.HasCorrection
	s.Anomalies = t.Anomalies
	return s
}

// Summaries sums up every phase with values.
func (r *Result) Summaries() map[Phase]Summary {
	m := make(map[Phase]Summary, len(r.Phases))
	for _, p := range r.Phases {
		m[p] = r.Summary(p)
	}
	return m
}

// Spectrum returns the percentile spectrum of a phase's raw or corrected
// distribution (see the Spectrum function); nil for a phase without values.
func (r *Result) Spectrum(p Phase, corrected bool) []SpectrumPoint {
	t, ok := r.Totals[p]
	if !ok {
		return nil
	}
	if corrected {
		return Spectrum(t.Corrected)
	}
	return Spectrum(t.Raw)
}

// WriteHgrm writes a phase's percentile distribution, raw or corrected, in
// milliseconds, in the .hgrm format HdrHistogram's plotter reads.
func (r *Result) WriteHgrm(w io.Writer, p Phase, corrected bool) error {
	t, ok := r.Totals[p]
	if !ok {
		return fmt.Errorf("%w %q", ErrNoPhase, string(p))
	}
	if corrected {
		return WriteHgrm(w, t.Corrected)
	}
	return WriteHgrm(w, t.Raw)
}
