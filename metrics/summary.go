package metrics

import "math"

// Distribution is what summaries need from a histogram; both
// *hdrhistogram.Histogram and *hdrhistogram.PackedHistogram have it.
// Percentiles go from 0 to 100.
type Distribution interface {
	TotalCount() int64
	ValueAtPercentile(percentile float64) int64
	Max() int64
	Mean() float64
}

// Summary sums up one phase. Latencies are milliseconds.
type Summary struct {
	Count                       int64
	P50, P90, P99, P999, Max    float64
	Mean                        float64
	CorrectedP50, CorrectedP90  float64
	CorrectedP99, CorrectedP999 float64
	CorrectedMax, CorrectedMean float64
	CorrectedCount              int64
	// HasCorrection reports whether any value was recorded with
	// RecordCorrected; without it the corrected figures equal the raw ones.
	HasCorrection bool
	Anomalies
}

// Summarize sums up a raw distribution and its coordinated-omission
// corrected counterpart (pass raw twice if there is none). The Anomalies and
// HasCorrection are left for the caller, who knows them.
func Summarize(raw, corrected Distribution) Summary {
	s := Summary{
		Count: raw.TotalCount(),
		P50:   usToMs(raw.ValueAtPercentile(50)),
		P90:   usToMs(raw.ValueAtPercentile(90)),
		P99:   usToMs(raw.ValueAtPercentile(99)),
		P999:  usToMs(raw.ValueAtPercentile(99.9)),
		Max:   maxMs(raw),
		Mean:  roundUs(raw.Mean() / 1000),
	}
	s.CorrectedP50 = usToMs(corrected.ValueAtPercentile(50))
	s.CorrectedP90 = usToMs(corrected.ValueAtPercentile(90))
	s.CorrectedMean = roundUs(corrected.Mean() / 1000)
	s.CorrectedP99 = usToMs(corrected.ValueAtPercentile(99))
	s.CorrectedP999 = usToMs(corrected.ValueAtPercentile(99.9))
	s.CorrectedMax = maxMs(corrected)
	s.CorrectedCount = corrected.TotalCount()
	return s
}

// SpectrumPoint is one point of a percentile spectrum: the latency in
// milliseconds at a percentile from 0 to 100.
type SpectrumPoint struct {
	Percentile float64
	Ms         float64
}

// Spectrum returns the points of d's percentile spectrum the way HdrHistogram
// plots it: percentiles spaced evenly on a log scale of 1/(1-percentile),
// ten per decade from 0% up to 99.999%, stopping where the data runs out
// (at the percentile of the last value, 100*(1-1/count)), so a line ends
// at its maximum. It is nil for an empty distribution.
func Spectrum(d Distribution) []SpectrumPoint {
	n := d.TotalCount()
	if n == 0 {
		return nil
	}
	last := 100 * (1 - 1/float64(n))
	var pts []SpectrumPoint
	for k := 0; k <= 50; k++ {
		p := 100 * (1 - math.Pow(10, -float64(k)/10))
		if k > 0 && p >= last {
			break
		}
		pts = append(pts, SpectrumPoint{Percentile: roundPct(p), Ms: usToMs(d.ValueAtPercentile(p))})
	}
	if last > 0 {
		pts = append(pts, SpectrumPoint{Percentile: roundPct(last), Ms: maxMs(d)})
	}
	return pts
}

func usToMs(us int64) float64 { return float64(us) / 1000 }

// maxMs returns the maximum in milliseconds, zero when empty.
func maxMs(d Distribution) float64 {
	if d.TotalCount() == 0 {
		return 0
	}
	return usToMs(d.Max())
}

// roundUs rounds milliseconds to whole microseconds.
func roundUs(ms float64) float64 { return math.Round(ms*1000) / 1000 }

func roundPct(p float64) float64 { return math.Round(p*1e6) / 1e6 }
