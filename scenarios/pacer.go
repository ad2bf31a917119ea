package scenarios

import (
	"math"
	"math/rand/v2"
	"time"
)

// A Pacer says when the next operation starts. Pace is given the time
// elapsed since the run started and the number of operations started so
// far (over all clients); it returns how long to wait from now before
// starting the next one, and stop once no more should start.
//
// Pacers are pure functions of their arguments (Poisson's draws come from a
// seeded source), so they are tested without a clock, in the manner of
// vegeta's pacers.
type Pacer interface {
	Pace(elapsed time.Duration, done uint64) (wait time.Duration, stop bool)
}

// An OpenPacer also gives each operation's intended start: open-loop
// latency is measured from there, which corrects for coordinated omission.
type OpenPacer interface {
	Pacer
	// Due returns when operation n (0-based) is meant to start, from the
	// start of the run.
	Due(n uint64) time.Duration
}

// Limit bounds a run by time, by operations, or both; a zero field is no
// bound.
type Limit struct {
	Duration time.Duration
	Ops      uint64
}

// Reached reports whether a run that has been going for elapsed and has
// started done operations must start no more.
func (l Limit) Reached(elapsed time.Duration, done uint64) bool {
	return (l.Duration > 0 && elapsed >= l.Duration) || (l.Ops > 0 && done >= l.Ops)
}

// ConstantPacer starts Rate operations per second, evenly spaced, the first at
// 0. A Rate of 0 or less starts nothing.
type ConstantPacer struct {
	Rate  float64
	Limit Limit
}

// Due returns n/Rate.
func (c ConstantPacer) Due(n uint64) time.Duration {
	if c.Rate <= 0 {
		return math.MaxInt64
	}
	return durationOf(float64(n) / c.Rate)
}

// Pace waits until operation done is due: at once when behind schedule.
func (c ConstantPacer) Pace(elapsed time.Duration, done uint64) (time.Duration, bool) {
	if c.Rate <= 0 {
		return 0, true
	}
	return paceTo(c.Due(done), elapsed, done, c.Limit)
}

// paceTo waits from elapsed until due, and stops when the limit is reached
// or the operation would start after the run's end.
func paceTo(due, elapsed time.Duration, done uint64, l Limit) (time.Duration, bool) {
	if l.Reached(elapsed, done) || (l.Duration > 0 && due >= l.Duration) {
		return 0, true
	}
	return max(due-elapsed, 0), false
}

// durationOf converts seconds to a Duration, saturating instead of
// overflowing.
func durationOf(seconds float64) time.Duration {
	ns := seconds * float64(time.Second)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// PoissonPacer starts operations at the times of a Poisson process of Rate per
// second: independent, exponentially distributed gaps averaging 1/Rate, the
// first gap counted from 0. The same seed gives the same times. A PoissonPacer
// keeps the last time it computed, so it is not safe for concurrent
// use; give the goroutine that dispatches operations its own.
type PoissonPacer struct {
	rate  float64
	seed  uint64
	limit Limit

	rng  *rand.Rand
	next uint64        // index of the operation whose time is at
	at   time.Duration // due time of operation next
}

// NewPoissonPacer returns a PoissonPacer. A rate of 0 or less starts nothing.
func NewPoissonPacer(rate float64, seed uint64, limit Limit) *PoissonPacer {
	p := &PoissonPacer{rate: rate, seed: seed, limit: limit}
	p.reset()
	return p
}

func (p *PoissonPacer) reset() {
	p.rng = rand.New(rand.NewPCG(p.seed, 0x9e3779b97f4a7c15))
	p.next = 0
	p.at = p.gap()
}

func (p *PoissonPacer) gap() time.Duration { return durationOf(p.rng.ExpFloat64() / p.rate) }

// Due returns the time of operation n, drawing the gaps up to it.
// Asking for an earlier n than the last one redraws from the start.
func (p *PoissonPacer) Due(n uint64) time.Duration {
	if p.rate <= 0 {
		return math.MaxInt64
	}
	if n < p.next {
		p.reset()
	}
	for p.next < n {
		p.at += p.gap()
		p.next++
		if p.at >= math.MaxInt64/2 {
			return math.MaxInt64
		}
	}
	return p.at
}

// Pace waits until operation done is due: at once when behind schedule.
func (p *PoissonPacer) Pace(elapsed time.Duration, done uint64) (time.Duration, bool) {
	if p.rate <= 0 {
		return 0, true
	}
	return paceTo(p.Due(done), elapsed, done, p.limit)
}

// ClosedPacer paces a closed loop: each client starts its next operation Think
// after its last one finished. Pace is asked once an operation has
// finished, and always waits Think; a client's first operation starts
// without asking (see FirstStart).
type ClosedPacer struct {
	Think time.Duration
	Limit Limit
}

// Pace returns Think, or stop once the limit is reached.
func (c ClosedPacer) Pace(elapsed time.Duration, done uint64) (time.Duration, bool) {
	if c.Limit.Reached(elapsed, done) {
		return 0, true
	}
	return max(c.Think, 0), false
}

// Ramp opens Clients sessions at Rate per second, the first at 0, so the
// server's session set-up is not itself a herd. A Rate of 0 or less opens
// them all at once.
type Ramp struct {
	Rate    float64
	Clients int
}

// At returns when session i (0-based) opens.
func (r Ramp) At(i int) time.Duration {
	if r.Rate <= 0 || i <= 0 {
		return 0
	}
	return durationOf(float64(i) / r.Rate)
}

// Done returns when the last session opens.
func (r Ramp) Done() time.Duration { return r.At(r.Clients - 1) }

// PacerFor returns the pacer of run r's arrivals, time counted from the
// end of its ramp-up: a ConstantPacer, a PoissonPacer seeded with the run's
// seed, or, for stampede and closed, a ClosedPacer.
func PacerFor(r Run) Pacer {
	limit := Limit{Duration: r.Duration, Ops: r.Ops}
	switch r.Arrival.Kind {
	case Constant:
		if len(r.Arrival.Stages) > 0 {
			return StagedPacer{Stages: r.Arrival.Stages, Limit: limit}
		}
		return ConstantPacer{Rate: r.Arrival.Rate, Limit: limit}
	case Poisson:
		return NewPoissonPacer(r.Arrival.Rate, r.Seed, limit)
	}
	return ClosedPacer{Think: r.Arrival.ThinkTime, Limit: limit}
}

// RampFor returns the ramp-up schedule of run r.
func RampFor(r Run) Ramp { return Ramp{Rate: r.RampUp, Clients: r.Clients} }
