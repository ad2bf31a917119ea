package metrics

import (
	"math"
	"math/bits"
)

// geometry repeats the bucket arithmetic of an HdrHistogram built with the
// same arguments (hdrhistogram-go keeps it unexported). The recorder needs it
// to batch coordinated-omission corrections bucket by bucket and to print the
// Buckets/SubBuckets trailer of a percentile distribution. Tests check it
// against the library.
type geometry struct {
	unitMagnitude  uint
	halfMagnitude  uint // log2(subBucketCount / 2)
	subBucketMask  int64
	subBucketCount int64
	bucketCount    int64
}

func newGeometryOf(lowest, highest int64, sigFigs int) geometry {
	sub := int(math.Ceil(math.Log2(2 * math.Pow10(sigFigs))))
	half := max(sub, 1) - 1
	unit := 0
	if lowest > 1 {
		unit = bits.Len64(uint64(lowest)) - 1
	}
	g := geometry{
		unitMagnitude:  uint(unit),
		halfMagnitude:  uint(half),
		subBucketCount: int64(1) << uint(half+1),
	}
	g.subBucketMask = (g.subBucketCount - 1) << g.unitMagnitude
	smallestUntrackable := g.subBucketCount << g.unitMagnitude
	g.bucketCount = 1
	for smallestUntrackable <= highest {
		if smallestUntrackable > math.MaxInt64/2 {
			g.bucketCount++
			break
		}
		smallestUntrackable <<= 1
		g.bucketCount++
	}
	return g
}

// lowestEquivalent returns the lowest value that falls in v's bucket.
func (g geometry) lowestEquivalent(v int64) int64 {
	bucket := bits.Len64(uint64(v|g.subBucketMask)) - int(g.unitMagnitude) - int(g.halfMagnitude+1)
	size := int64(1) << (g.unitMagnitude + uint(bucket))
	return v &^ (size - 1)
}
