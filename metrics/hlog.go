package metrics

import (
	"fmt"
	"io"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// CorrectedTagSuffix ends the tag of coordinated-omission corrected lines in
// an interval log: raw lines are tagged "acquire", corrected ones
// "acquire_corrected".
const CorrectedTagSuffix = "_corrected"

// phaseLog keeps a phase's intervals compressed (V2, base64, a few hundred
// bytes each) for the .hlog file, so long runs stay small.
type phaseLog struct {
	entries []logEntry
	errs    int   // intervals that could not be encoded
	err     error // the first such error
}

type logEntry struct {
	start, end time.Time
	raw, corr  []byte // corr is nil when the interval had no correction
}

func (l *phaseLog) add(start, end time.Time, pi *PhaseInterval) {
	e := logEntry{start: start, end: end}
	var err error
	e.raw, err = pi.Raw.EncodeV2()
	if err == nil && pi.HasCorrection {
		e.corr, err = pi.Corrected.EncodeV2()
	}
	if err != nil {
		if l.errs == 0 {
			l.err = err
		}
		l.errs++
		return
	}
	l.entries = append(l.entries, e)
}

func (l phaseLog) clone() phaseLog {
	l.entries = slices.Clone(l.entries)
	return l
}

// WriteHlog writes a phase's interval log, one line per interval, with the
// library's HistogramLogWriter, readable by HdrHistogram's own log tools
// (HistogramLogProcessor, HistogramLogAnalyzer): the format version, a
// comment on units, the start and base times, the legend, then the raw
// intervals tagged with the phase and, for intervals with corrections, the
// corrected ones tagged phase+CorrectedTagSuffix. Timestamps are seconds
// since the base time (the run's start, whole second). Values are
// microseconds, so the Interval_Max column, which the library scales by
// 1e6, reads in seconds.
func (r *Result) WriteHlog(w io.Writer, p Phase) error {
	l, ok := r.logs[p]
	if !ok {
		return fmt.Errorf("%w %q", ErrNoPhase, string(p))
	}
	if l.errs > 0 {
		return fmt.Errorf("metrics: %d intervals of phase %s could not be encoded for the log: %w", l.errs, p, l.err)
	}
	lw := hdrhistogram.NewHistogramLogWriter(w)
	startMs := r.Start.UnixMilli()
	baseMs := startMs - startMs%1000 // OutputBaseTime writes whole seconds
	lw.SetBaseTime(baseMs)
	steps := []func() error{
		lw.OutputLogFormatVersion,
		func() error {
			return lw.OutputComment(fmt.Sprintf("[zkherd phase %s: values in microseconds, Interval_Max in seconds; "+
				"tags %s (raw) and %s%s (coordinated-omission corrected)]", p, p, p, CorrectedTagSuffix))
		},
		func() error {
			return lw.OutputComment(fmt.Sprintf("[for example: HistogramLogProcessor -i FILE -tag %s -outputValueUnitRatio 1000 (milliseconds)]", p))
		},
		func() error { return lw.OutputStartTime(startMs) },
		func() error { return lw.OutputBaseTime(baseMs) },
		lw.OutputLegend,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("metrics: writing interval log of %s: %w", p, err)
		}
	}
	for _, e := range l.entries {
		if err := writeLogLine(lw, e, e.raw, string(p)); err != nil {
			return fmt.Errorf("metrics: writing interval log of %s: %w", p, err)
		}
		if e.corr == nil {
			continue
		}
		if err := writeLogLine(lw, e, e.corr, string(p)+CorrectedTagSuffix); err != nil {
			return fmt.Errorf("metrics: writing interval log of %s: %w", p, err)
		}
	}
	return nil
}

func writeLogLine(lw *hdrhistogram.HistogramLogWriter, e logEntry, encoded []byte, tag string) error {
	h, err := hdrhistogram.DecodePacked(encoded)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDecode, err)
	}
	h.SetStartTimeMs(e.start.UnixMilli())
	h.SetEndTimeMs(e.end.UnixMilli())
	h.SetTag(tag)
	return lw.OutputIntervalPackedHistogram(h)
}

// Encoder is a histogram that encodes itself in the V2 compressed format;
// *hdrhistogram.Histogram and *hdrhistogram.PackedHistogram are.
type Encoder interface {
	EncodeV2() ([]byte, error)
}

// EncodeHistogram returns h in HdrHistogram's V2 compressed, base64 form
// (a few hundred bytes), the way to ship a histogram to another process.
func EncodeHistogram(h Encoder) (string, error) {
	b, err := h.EncodeV2()
	if err != nil {
		return "", fmt.Errorf("metrics: encoding histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram decodes what EncodeHistogram (or any HdrHistogram V2
// writer) produced.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return h, nil
}
