package scenarios

import (
	"slices"
	"time"
)

// Overrides are a user's changes to a scenario (zkherd load's --clients,
// --duration, --ops, --session-timeout). A zero field keeps the
// scenario's value.
type Overrides struct {
	// Clients replaces the scenario's clients. A queue keeps its proportion
	// of producers (at least one of each); a barrier whose size no longer
	// divides the clients puts every client in one barrier; the locks are
	// at most the clients.
	Clients int
	// Duration bounds the run in time instead of the scenario's bound; a
	// queue then produces until the duration ends.
	Duration time.Duration
	// Ops bounds the run by operations instead of the scenario's bound; for
	// a queue bounded by items it is the number of items.
	Ops uint64
	// SessionTimeout replaces every client session's timeout.
	SessionTimeout time.Duration
	// Arrival and Rate replace the arrival model (zkherd load's --arrival
	// and --rate); see Spec.WithArrival.
	Arrival ArrivalKind
	Rate    float64
	// Thresholds are added to the scenario's (zkherd load's --threshold).
	Thresholds []Threshold
	// RampUp replaces the sessions opened per second (zkherd load's
	// --ramp-up).
	RampUp float64
	// Stages replace the arrival with constant arrivals on this schedule
	// (zkherd load's --rate RATE:DURATION,...); the run lasts it.
	Stages []Stage
}

// Apply returns s with o applied; s and its parameter blocks are not
// changed. The result still needs Validate.
func (o Overrides) Apply(s Spec) Spec {
	if o.Clients > 0 {
		n := o.Clients
		s.Clients = n
		if s.Queue != nil && s.Queue.Producers+s.Queue.Consumers > 0 {
			q := *s.Queue
			p := max(1, min(n-1, n*q.Producers/max(1, q.Producers+q.Consumers)))
			q.Producers, q.Consumers = p, n-p
			s.Queue = &q
		}
		if s.Barrier != nil && s.Barrier.Size > 0 && n%s.Barrier.Size != 0 {
			b := *s.Barrier
			b.Size = 0 // every client in one barrier
			s.Barrier = &b
		}
		s.Locks = min(s.Locks, n)
		if s.Semaphore != nil && s.Semaphore.Leases > n {
			sem := *s.Semaphore
			sem.Leases = n
			s.Semaphore = &sem
		}
	}
	if o.Duration > 0 {
		s.Duration, s.Ops = o.Duration, 0
		if s.Queue != nil {
			q := *s.Queue
			q.Items = 0
			s.Queue = &q
		}
	}
	if o.Ops > 0 {
		s.Ops, s.Duration = o.Ops, 0
		if s.Queue != nil && s.Queue.Items > 0 {
			q := *s.Queue
			q.Items, s.Ops = o.Ops, 0
			s.Queue = &q
		}
	}
	if o.SessionTimeout > 0 {
		s.SessionTimeout = o.SessionTimeout
	}
	if o.Arrival != "" || o.Rate > 0 {
		s = s.WithArrival(o.Arrival, o.Rate)
	}
	if len(o.Stages) > 0 {
		s.Arrival = Arrival{Kind: Constant, Stages: slices.Clone(o.Stages)}
		s.Duration, s.Ops = 0, 0
	}
	if o.RampUp > 0 {
		s.RampUp = o.RampUp
	}
	if len(o.Thresholds) > 0 {
		s.Thresholds = append(slices.Clone(s.Thresholds), o.Thresholds...)
	}
	return s
}
