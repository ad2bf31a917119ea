package metrics

import (
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// spillAt is how many values a shard buffers per phase before it records
// them into its own histograms. Rotate normally empties the buffers first,
// so recording is an append; the spill only bounds memory (64 KiB per phase)
// when a shard records faster than that per interval, or nobody rotates.
const spillAt = 8192

// A Shard records latencies for one worker goroutine. Its mutex is taken by
// that worker on every record and by the recorder's Rotate once per
// interval, so it is never contended for long. Sharing a shard between
// goroutines is safe but makes them wait for each other.
//
// A shard buffers the values of the current interval, double-buffered: Rotate
// swaps in the empty buffer and records the full one into the recorder's
// histograms (dense, one per phase) while the worker goes on recording. Its
// memory follows the number of values per interval, so an idle shard costs
// almost nothing, and a coordinated-omission correction costs the worker
// nothing: the rotator computes it.
type Shard struct {
	r  *Recorder
	mu sync.Mutex
	// cur is recorded into; spare is the rotator's until the next swap.
	cur, spare *shardBuf
}

type shardBuf struct {
	phases  []phaseBuf // indexed like Recorder.phases
	unknown int64      // values recorded under a phase the recorder does not know
}

type phaseBuf struct {
	vals    []int64   // values recorded with Record, in microseconds
	corr    []corrVal // values recorded with RecordCorrected
	spill   *spill    // values that did not fit in the buffers, allocated on first use
	touched bool      // something was recorded since the last rotation
	an      Anomalies
}

type corrVal struct{ v, expected int64 }

// spill holds a phase's values once its buffers are full: raw holds them as
// measured and extra the values correction added (corrected = raw + extra).
type spill struct {
	raw, extra *hdrhistogram.PackedHistogram
	used       bool
	corrected  bool
}

func (pb *phaseBuf) reset() {
	pb.vals = pb.vals[:0]
	pb.corr = pb.corr[:0]
	if pb.spill != nil && pb.spill.used {
		pb.spill.raw.Reset()
		pb.spill.extra.Reset()
		pb.spill.used = false
		pb.spill.corrected = false
	}
	pb.touched = false
	pb.an = Anomalies{}
}

func (r *Recorder) newShardBuf() *shardBuf {
	return &shardBuf{phases: make([]phaseBuf, len(r.phases))}
}

// Record records one latency of phase p as measured.
func (s *Shard) Record(p Phase, d time.Duration) { s.record(p, d, 0) }

// RecordCorrected records one latency of phase p of an operation that was
// meant to start every expected (open-loop pacing). The corrected
// distribution also gets the latencies the operations that should have
// started during a stall would have seen: d-expected, d-2*expected, ... down
// to expected, exactly as HdrHistogram's RecordCorrectedValue adds them (the
// rotator computes them, batched per bucket, so a minutes-long stall costs a
// few thousand bucket updates and the worker nothing). An expected interval
// under 1us corrects nothing.
func (s *Shard) RecordCorrected(p Phase, d, expected time.Duration) {
	s.record(p, d, max(expected.Microseconds(), 0))
}

func (s *Shard) record(p Phase, d time.Duration, expected int64) {
	r := s.r
	i, known := r.index[p]
	v := d.Microseconds()
	var neg, over bool
	if v < 0 {
		v, neg = 0, true
	} else if v > r.highest {
		v, over = r.highest, true
	}

	s.mu.Lock()
	if !known {
		s.cur.unknown++
		s.mu.Unlock()
		return
	}
	pb := &s.cur.phases[i]
	pb.touched = true
	if neg {
		pb.an.Negative++
	}
	if over {
		pb.an.OverRange++
	}
	if expected > 0 {
		pb.corr = append(pb.corr, corrVal{v, expected})
	} else {
		pb.vals = append(pb.vals, v)
	}
	if len(pb.vals)+len(pb.corr) >= spillAt {
		r.spill(pb)
	}
	s.mu.Unlock()
}

// spill records a phase's buffered values into its spill histograms.
func (r *Recorder) spill(pb *phaseBuf) {
	sp := pb.spill
	if sp == nil {
		sp = &spill{raw: r.newPacked(), extra: r.newPacked()}
		pb.spill = sp
	}
	sp.used = true
	for _, v := range pb.vals {
		if sp.raw.RecordValue(v) != nil {
			pb.an.RecordErrors++
		}
	}
	for _, c := range pb.corr {
		if sp.raw.RecordValue(c.v) != nil {
			pb.an.RecordErrors++
		}
		pb.an.RecordErrors += r.correct(sp.extra, c.v, c.expected)
		sp.corrected = true
	}
	pb.vals = pb.vals[:0]
	pb.corr = pb.corr[:0]
}

// valueRecorder is what correct needs from a dense or packed histogram.
type valueRecorder interface {
	RecordValues(v, n int64) error
}

// correct records into h the values coordinated-omission correction adds
// for v at the expected interval: v-expected, v-2*expected, ... >= expected.
// Walking them from the top, it records all of those that share a bucket at
// once. It returns how many values h rejected.
func (r *Recorder) correct(h valueRecorder, v, expected int64) (rejected int64) {
	if expected <= 0 {
		return 0
	}
	for m := v - expected; m >= expected; {
		low := max(r.geom.lowestEquivalent(m), expected)
		n := (m-low)/expected + 1
		if h.RecordValues(m, n) != nil {
			rejected += n
		}
		m -= n * expected
	}
	return rejected
}
