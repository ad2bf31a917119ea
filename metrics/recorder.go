package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry. Values are microseconds.
const (
	// LowestTrackable is the smallest value told apart from zero: 1 us.
	LowestTrackable = 1
	// SignificantFigures is the precision kept at every magnitude.
	SignificantFigures = 3
	// DefaultHighest is the largest latency recorded as itself; larger values
	// are recorded as the highest and counted as OverRange. Ten minutes covers
	// the acquire latency of a stampede of thousands of contenders.
	DefaultHighest = 10 * time.Minute
)

var (
	// ErrBadPhase is returned for a phase name that cannot be used.
	ErrBadPhase = errors.New("metrics: invalid phase name")
	// ErrBadOption is returned by NewRecorder for an option out of range.
	ErrBadOption = errors.New("metrics: invalid option")
	// ErrNoPhase is returned when a Result holds no values for a phase.
	ErrNoPhase = errors.New("metrics: no values recorded for phase")
	// ErrDecode is returned for a histogram that cannot be decoded.
	ErrDecode = errors.New("metrics: cannot decode histogram")
)

// Anomalies count values that were not recorded as measured. None of them
// is ever dropped without being counted here.
type Anomalies struct {
	// OverRange values were larger than the highest trackable value and were
	// recorded as that value.
	OverRange int64
	// Negative values (a clock stepping back) were recorded as zero.
	Negative int64
	// RecordErrors counts values the histogram rejected; they are lost.
	RecordErrors int64
	// MergeDropped counts values a merge dropped from the raw or the
	// corrected distribution; they are lost. It stays zero unless histograms
	// of different ranges meet.
	MergeDropped int64
}

func (a *Anomalies) add(b Anomalies) {
	a.OverRange += b.OverRange
	a.Negative += b.Negative
	a.RecordErrors += b.RecordErrors
	a.MergeDropped += b.MergeDropped
}

// Any reports whether any anomaly was counted.
func (a Anomalies) Any() bool { return a != Anomalies{} }

// Option configures a Recorder.
type Option func(*config)

type config struct {
	highest time.Duration
	extra   []Phase
	onClose func(Phase, *PhaseInterval)
}

// WithIntervalHook calls f with every phase's interval as the recorder
// closes it (Rotate, Finish), on the rotating goroutine and under the
// recorder's lock: a live exporter sees the very values the HdrHistograms
// hold, and the workers pay nothing for it. f must not keep pi's
// histograms past its return (they go to the interval log) or block.
func WithIntervalHook(f func(p Phase, pi *PhaseInterval)) Option {
	return func(c *config) { c.onClose = f }
}

// WithPhases adds phases beyond the built-in ones (see Phases).
func WithPhases(p ...Phase) Option {
	return func(c *config) { c.extra = append(c.extra, p...) }
}

// A Recorder collects the latencies and counters of one scenario run.
// Record through shards (NewShard); bump counters on the Recorder itself.
// Rotate once per interval from one goroutine; Finish at the end.
type Recorder struct {
	geom    geometry
	highest int64 // us
	phases  []Phase
	index   map[Phase]int // read-only after NewRecorder
	start   time.Time
	onClose func(Phase, *PhaseInterval) // WithIntervalHook; nil when none

	counters counters

	shardsMu sync.Mutex
	shards   []*Shard

	mu        sync.Mutex // serializes Rotate, Finish and Summary; guards the fields below
	last      time.Time  // end of the last interval
	acc       []*phaseAcc
	prev      Counts
	base      Counts // the counts at Split: Finish's are since then
	split     bool
	intervals []IntervalStats
	unknown   int64
}

// phaseAcc accumulates one phase: the interval being closed and the totals,
// dense because there is one per phase, not per shard.
type phaseAcc struct {
	ivRaw, ivCorr   *hdrhistogram.Histogram
	totRaw, totCorr *hdrhistogram.Histogram
	ivAnom, totAnom Anomalies
	ivTouched       bool
	ivCorrected     bool
	corrected       bool
	log             phaseLog
}

// NewRecorder returns a recorder for a run that starts at start.
func NewRecorder(start time.Time, opts ...Option) (*Recorder, error) {
	cfg := config{highest: DefaultHighest}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.highest < time.Millisecond {
		return nil, fmt.Errorf("%w: highest trackable latency %v is below 1ms", ErrBadOption, cfg.highest)
	}
	r := &Recorder{
		highest: cfg.highest.Microseconds(),
		phases:  Phases(),
		start:   start,
		last:    start,
		onClose: cfg.onClose,
	}
	for _, p := range cfg.extra {
		if err := p.check(); err != nil {
			return nil, err
		}
		if !slices.Contains(r.phases, p) {
			r.phases = append(r.phases, p)
		}
	}
	r.geom = newGeometryOf(LowestTrackable, r.highest, SignificantFigures)
	r.index = make(map[Phase]int, len(r.phases))
	for i, p := range r.phases {
		r.index[p] = i
	}
	r.acc = make([]*phaseAcc, len(r.phases))
	return r, nil
}

// Start returns the start time given to NewRecorder.
func (r *Recorder) Start() time.Time { return r.start }

// Highest returns the largest latency recorded as itself.
func (r *Recorder) Highest() time.Duration { return time.Duration(r.highest) * time.Microsecond }

// NewShard returns a new shard for one worker goroutine. A shard is cheap
// (its histograms are sparse and allocated on first use) and lives as long
// as the recorder, so hand one to each worker and reuse it rather than
// creating one per operation.
func (r *Recorder) NewShard() *Shard {
	s := &Shard{r: r, cur: r.newShardBuf(), spare: r.newShardBuf()}
	r.shardsMu.Lock()
	r.shards = append(r.shards, s)
	r.shardsMu.Unlock()
	return s
}

func (r *Recorder) newPacked() *hdrhistogram.PackedHistogram {
	return hdrhistogram.NewPacked(LowestTrackable, r.highest, SignificantFigures)
}

func (r *Recorder) newDense() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestTrackable, r.highest, SignificantFigures)
}

func (r *Recorder) accFor(i int) *phaseAcc {
	if r.acc[i] == nil {
		r.acc[i] = &phaseAcc{
			ivRaw: r.newDense(), ivCorr: r.newDense(),
			totRaw: r.newDense(), totCorr: r.newDense(),
		}
	}
	return r.acc[i]
}

// Rotate closes the interval that started at the previous Rotate (or at the
// recorder's start) and ends at now: it takes every shard's values, merges
// them per phase, adds them to the totals and returns the interval. Call it
// from one goroutine, once per interval (normally every second); calls are
// serialized.
func (r *Recorder) Rotate(now time.Time) *Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rotate(now)
}

func (r *Recorder) rotate(now time.Time) *Interval {
	r.shardsMu.Lock()
	shards := r.shards[:len(r.shards):len(r.shards)]
	r.shardsMu.Unlock()

	iv := &Interval{Start: r.last, End: now, Phases: make(map[Phase]*PhaseInterval)}
	for _, s := range shards {
		s.mu.Lock()
		full := s.cur
		s.cur, s.spare = s.spare, full
		s.mu.Unlock()
		// The owner now records into the other buffer; full is ours until
		// the next swap, which happens under s.mu after we are done.
		iv.UnknownPhase += r.drain(full)
	}
	r.unknown += iv.UnknownPhase

	stats := IntervalStats{Start: iv.Start, End: iv.End, UnknownPhase: iv.UnknownPhase,
		Phases: make(map[Phase]PhasePoint)}
	for i, a := range r.acc {
		if a == nil || !a.ivTouched {
			continue
		}
		p := r.phases[i]
		pi := r.closePhase(a, iv.Start, iv.End)
		iv.Phases[p] = pi
		if r.onClose != nil {
			r.onClose(p, pi)
		}
		stats.Phases[p] = pointOf(pi)
	}

	cur := r.counters.snapshot()
	iv.Counts = cur.sub(r.prev)
	r.prev = cur
	stats.Counts = iv.Counts
	r.intervals = append(r.intervals, stats)
	r.last = now
	return iv
}

// drain records a shard buffer the rotator owns into the interval
// accumulators and empties it. It returns the buffer's unknown-phase count.
func (r *Recorder) drain(b *shardBuf) int64 {
	for i := range b.phases {
		pb := &b.phases[i]
		if !pb.touched {
			continue
		}
		a := r.accFor(i)
		a.ivTouched = true
		an := &a.ivAnom
		an.add(pb.an)
		an.RecordErrors += r.recordBuffered(a.ivRaw, a.ivCorr, pb)
		a.ivCorrected = a.ivCorrected || len(pb.corr)+len(pb.pairs) > 0
		if sp := pb.spill; sp != nil && sp.used {
			an.MergeDropped += sp.raw.MergeInto(a.ivRaw)
			an.MergeDropped += sp.corr.MergeInto(a.ivCorr)
			a.ivCorrected = a.ivCorrected || sp.corrected
		}
		pb.reset()
	}
	unknown := b.unknown
	b.unknown = 0
	return unknown
}

// closePhase turns one phase's interval accumulators into the interval's
// histograms, adds them to the totals and the interval log, and resets them.
func (r *Recorder) closePhase(a *phaseAcc, start, end time.Time) *PhaseInterval {
	pi := &PhaseInterval{Anomalies: a.ivAnom, HasCorrection: a.ivCorrected}
	pi.Raw = r.newPacked()
	pi.MergeDropped += pi.Raw.MergeFrom(a.ivRaw)
	pi.Corrected = pi.Raw
	if a.ivCorrected {
		pi.Corrected = r.newPacked()
		pi.MergeDropped += pi.Corrected.MergeFrom(a.ivCorr)
		a.corrected = true
	}
	for _, h := range []*hdrhistogram.PackedHistogram{pi.Raw, pi.Corrected} {
		h.SetStartTimeMs(start.UnixMilli())
		h.SetEndTimeMs(end.UnixMilli())
	}
	pi.MergeDropped += pi.Raw.MergeInto(a.totRaw)
	pi.MergeDropped += pi.Corrected.MergeInto(a.totCorr)
	a.totAnom.add(pi.Anomalies)
	a.log.add(start, end, pi)

	a.ivRaw.Reset()
	a.ivCorr.Reset()
	a.ivAnom = Anomalies{}
	a.ivTouched = false
	a.ivCorrected = false
	return pi
}

// Summary returns the summary of one phase's totals so far (for a live
// progress line). It is zero for a phase with no values.
func (r *Recorder) Summary(p Phase) Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.index[p]
	if !ok || r.acc[i] == nil {
		return Summary{}
	}
	a := r.acc[i]
	s := Summarize(a.totRaw, a.totCorr)
	s.HasCorrection = a.corrected
	s.Anomalies = a.totAnom
	return s
}

// Finish closes the last interval at end, like Rotate (an empty interval of
// no length, after a Rotate at end, is not kept), and returns the result of
// the run so far. The result shares nothing mutable with the
// recorder.
func (r *Recorder) Finish(end time.Time) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	if iv := r.rotate(end); !iv.End.After(iv.Start) && iv.empty() {
		r.intervals = r.intervals[:len(r.intervals)-1] // a Rotate at end already closed the last interval
	}
	return r.result(end)
}

// Split ends the run's first part at now (the ramp-up, before the
// measured window): it closes the interval up to now and returns the
// totals and counts so far as a Result of their own, then starts the
// totals and counts afresh, so that Finish's Result holds only what
// follows. The intervals and interval logs keep the whole run. Call it at
// most once, from the goroutine that would Rotate.
func (r *Recorder) Split(now time.Time) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotate(now)
	res := r.result(now)
	for _, a := range r.acc {
		if a == nil {
			continue
		}
		a.totRaw.Reset()
		a.totCorr.Reset()
		a.totAnom = Anomalies{}
		a.corrected = false
	}
	r.base, r.split = r.prev.clone(), true
	return res
}

// result is the totals and counts since the start or the Split, at end.
func (r *Recorder) result(end time.Time) *Result {
	counts := r.prev.clone()
	if r.split {
		counts = r.prev.sub(r.base)
	}
	res := &Result{
		Start:        r.start,
		End:          end,
		Highest:      r.Highest(),
		Counts:       counts,
		Totals:       make(map[Phase]*PhaseTotal),
		Intervals:    slices.Clone(r.intervals),
		UnknownPhase: r.unknown,
		logs:         make(map[Phase]phaseLog),
		geom:         r.geom,
	}
	for i, a := range r.acc {
		if a == nil || (a.totRaw.TotalCount() == 0 && !a.totAnom.Any()) {
			continue
		}
		p := r.phases[i]
		res.Phases = append(res.Phases, p)
		res.Totals[p] = &PhaseTotal{
			Raw:           a.totRaw.Clone(),
			Corrected:     a.totCorr.Clone(),
			HasCorrection: a.corrected,
			Anomalies:     a.totAnom,
		}
		res.logs[p] = a.log.clone()
	}
	return res
}
