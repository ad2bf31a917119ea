package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TicksPerHalfDistance is the percentile step of a .hgrm distribution: five
// steps for each halving of the distance to 100%, as HdrHistogram prints.
const TicksPerHalfDistance = 5

// WriteHgrm writes h's percentile distribution in the text format of Java
// HdrHistogram's outputPercentileDistribution, which its plotter
// (plotFiles.html) and other tools read: a "Value Percentile TotalCount
// 1/(1-Percentile)" table, the 100% line without the last column, and the
// #[Mean ...], #[Max ...] and #[Buckets ...] trailer. h holds microseconds;
// values are written in milliseconds.
func WriteHgrm(w io.Writer, h *hdrhistogram.Histogram) error {
	const scale = 1000.0 // us per ms
	sig := int(h.SignificantFigures())
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	if h.TotalCount() > 0 {
		for _, b := range h.CumulativeDistributionWithTicks(TicksPerHalfDistance) {
			q := b.Quantile / 100
			v := float64(b.ValueAt) / scale
			if b.Quantile == 100 {
				fmt.Fprintf(bw, "%12.*f %2.12f %10d\n", sig, v, q, b.Count)
				continue
			}
			inv := 1 / (1 - q)
			if math.IsInf(inv, 1) {
				fmt.Fprintf(bw, "%12.*f %2.12f %10d %14s\n", sig, v, q, b.Count, "Infinity")
				continue
			}
			fmt.Fprintf(bw, "%12.*f %2.12f %10d %14.2f\n", sig, v, q, b.Count, inv)
		}
	}
	g := newGeometryOf(h.LowestTrackableValue(), h.HighestTrackableValue(), sig)
	var max float64
	if h.TotalCount() > 0 {
		max = float64(h.Max()) / scale
	}
	fmt.Fprintf(bw, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", sig, h.Mean()/scale, sig, h.StdDev()/scale)
	fmt.Fprintf(bw, "#[Max     = %12.*f, Total count    = %12d]\n", sig, max, h.TotalCount())
	fmt.Fprintf(bw, "#[Buckets = %12d, SubBuckets     = %12d]\n", g.bucketCount, g.subBucketCount)
	return bw.Flush()
}
