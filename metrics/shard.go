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
	pairs   []pairVal // values recorded with RecordIntended
	spill   *spill    // values that did not fit in the buffers, allocated on first use
	touched bool      // something was recorded since the last rotation
	an      Anomalies
}

type corrVal struct{ v, expected int64 }

// pairVal is one operation of an open-loop run: its service time (from the
// call) and its latency from the intended start.
type pairVal struct{ service, intended int64 }

// spill holds a phase's values once its buffers are full: raw holds them as
// measured and corr the corrected distribution.
type spill struct {
	raw, corr *hdrhistogram.PackedHistogram
	used      bool
	corrected bool
}

func (pb *phaseBuf) reset() {
	pb.vals = pb.vals[:0]
	pb.corr = pb.corr[:0]
	pb.pairs = pb.pairs[:0]
	if pb.spill != nil && pb.spill.used {
		pb.spill.raw.Reset()
		pb.spill.corr.Reset()
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

// RecordIntended records one operation of phase p that was meant to start
// at a scheduled time (open-loop pacing), the way wrk2 measures it: the
// corrected distribution gets fromIntended, its latency from the intended
// start, and the raw one service, the time from the call. A stalled server
// or generator shows in the first: the operations that should have started
// during a stall waited for it. Nothing synthetic is added; fromIntended is
// never below service for a call made at or after its intended start.
func (s *Shard) RecordIntended(p Phase, service, fromIntended time.Duration) {
	r := s.r
	sv, sneg, sover := r.clamp(service)
	iv, ineg, iover := r.clamp(fromIntended)
	pb := s.lockPhase(p, sneg || ineg, sover || iover)
	if pb == nil {
		return
	}
	pb.pairs = append(pb.pairs, pairVal{sv, iv})
	s.unlockPhase(pb)
}

// clamp converts d to microseconds within the recorder's range.
func (r *Recorder) clamp(d time.Duration) (v int64, neg, over bool) {
	v = d.Microseconds()
	if v < 0 {
		return 0, true, false
	} else if v > r.highest {
		return r.highest, false, true
	}
	return v, false, false
}

func (s *Shard) record(p Phase, d time.Duration, expected int64) {
	v, neg, over := s.r.clamp(d)
	pb := s.lockPhase(p, neg, over)
	if pb == nil {
		return
	}
	if expected > 0 {
		pb.corr = append(pb.corr, corrVal{v, expected})
	} else {
		pb.vals = append(pb.vals, v)
	}
	s.unlockPhase(pb)
}

// lockPhase locks s and returns phase p's buffer, touched and with the
// value's anomalies counted; nil, unlocked, for a phase the recorder does
// not know (counted as unknown).
func (s *Shard) lockPhase(p Phase, neg, over bool) *phaseBuf {
	i, known := s.r.index[p]
	s.mu.Lock()
	if !known {
		s.cur.unknown++
		s.mu.Unlock()
		return nil
	}
	pb := &s.cur.phases[i]
	pb.touched = true
	if neg {
		pb.an.Negative++
	}
	if over {
		pb.an.OverRange++
	}
	return pb
}

// unlockPhase spills pb's buffered values once there are enough of them,
// then unlocks s (locked by lockPhase).
func (s *Shard) unlockPhase(pb *phaseBuf) {
	if len(pb.vals)+len(pb.corr)+len(pb.pairs) >= spillAt {
		s.r.spill(pb)
	}
	s.mu.Unlock()
}

// spill records a phase's buffered values into its spill histograms.
func (r *Recorder) spill(pb *phaseBuf) {
	sp := pb.spill
	if sp == nil {
		sp = &spill{raw: r.newPacked(), corr: r.newPacked()}
		pb.spill = sp
	}
	sp.used = true
	pb.an.RecordErrors += r.recordBuffered(sp.raw, sp.corr, pb)
	sp.corrected = sp.corrected || len(pb.corr)+len(pb.pairs) > 0
	pb.vals = pb.vals[:0]
	pb.corr = pb.corr[:0]
	pb.pairs = pb.pairs[:0]
}

// recordBuffered records a phase buffer's values into a raw and a
// corrected histogram; it returns how many values they rejected.
func (r *Recorder) recordBuffered(raw, corr valueRecorder, pb *phaseBuf) (rejected int64) {
	rec := func(h valueRecorder, v int64) {
		if h.RecordValues(v, 1) != nil {
			rejected++
		}
	}
	for _, v := range pb.vals {
		rec(raw, v)
		rec(corr, v)
	}
	for _, c := range pb.corr {
		rec(raw, c.v)
		rec(corr, c.v)
		rejected += r.correct(corr, c.v, c.expected)
	}
	for _, pv := range pb.pairs {
		rec(raw, pv.service)
		rec(corr, pv.intended)
	}
	return rejected
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
