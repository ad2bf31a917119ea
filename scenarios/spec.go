package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// RampUpFor is the ramp-up rate of a run of clients whose scenario sets
// none: DefaultRampUp, or fast enough to open them all in DefaultRampTime
// (a fixed 200/s took 50 s to open 10,000 sessions, and the window
// measured the ramp, not the recipe). Sessions still open at most
// loadgen.DefaultConnectsInFlight at a time.
func RampUpFor(clients int) float64 {
	return min(max(DefaultRampUp, float64(clients)/DefaultRampTime.Seconds()), MaxDefaultRampUp)
}

// MaxDefaultRampUp caps RampUpFor: about what one process opens per
// second on a loopback server of a 2-core machine.
const MaxDefaultRampUp = 2000.0

// MaxRampTime is the longest ramp-up a run starts without being told
// the rate (zkherd load --ramp-up): past it the count is a mistake, most
// likely.
const MaxRampTime = 5 * time.Minute

// DefaultRampTime is the longest a default ramp-up takes.
const DefaultRampTime = 10 * time.Second

// Defaults for Spec fields left at their zero value.
const (
	DefaultClients        = 50
	DefaultLocks          = 1
	DefaultDuration       = 10 * time.Second // used when neither Duration nor Ops is set
	DefaultArrival        = Closed
	DefaultRampUp         = 200.0 // sessions opened per second, at least (RampUpFor)
	DefaultHold           = time.Millisecond
	DefaultSessionTimeout = 10 * time.Second
	DefaultEnsemble       = 1
	DefaultSeed           = 1
	DefaultReadRatio      = 0.9
	DefaultLeases         = 4
)

// Limits checked by Validate.
const (
	MinSessionTimeout = time.Second      // a local ensemble's minSessionTimeout
	MaxSessionTimeout = 60 * time.Second // a local ensemble's maxSessionTimeout
	MaxClients        = 1_000_000        // far beyond one machine; catches typos
)

// ArrivalKind says how clients issue operations.
type ArrivalKind string

// Arrival kinds.
const (
	// Stampede: every client's first operation starts at the same instant,
	// once all sessions are up; each then repeats after ThinkTime.
	Stampede ArrivalKind = "stampede"
	// Constant: open loop, Rate operations per second in total, evenly spaced.
	Constant ArrivalKind = "constant"
	// Poisson: open loop, exponentially distributed gaps averaging 1/Rate.
	Poisson ArrivalKind = "poisson"
	// Closed: each client starts as soon as its session is up and repeats
	// after ThinkTime.
	Closed ArrivalKind = "closed"
)

// ArrivalKinds lists every arrival kind.
func ArrivalKinds() []ArrivalKind { return []ArrivalKind{Stampede, Constant, Poisson, Closed} }

// Open reports whether k is open loop (operations start on a schedule,
// whether or not earlier ones finished).
func (k ArrivalKind) Open() bool { return k == Constant || k == Poisson }

// Arrival is how clients issue operations.
type Arrival struct {
	// Kind defaults to DefaultArrival.
	Kind ArrivalKind
	// Rate is operations per second over all clients; required for
	// constant and poisson, unused otherwise.
	Rate float64
	// ThinkTime is the pause between a client's operations for stampede and
	// closed; defaults to 0.
	ThinkTime time.Duration
	// Stages, for constant arrivals, replace Rate with a schedule of rates
	// (StagedPacer); the run lasts their total duration.
	Stages []Stage
}

// TargetRate is the rate the arrival asks for over the whole run: Rate,
// or its stages' operations per second.
func (a Arrival) TargetRate() float64 {
	if len(a.Stages) > 0 {
		return TargetRate(a.Stages)
	}
	return a.Rate
}

// DistKind names a hold or work time distribution.
type DistKind string

// Distribution kinds.
const (
	Fixed       DistKind = "fixed"
	Uniform     DistKind = "uniform"
	Exponential DistKind = "exponential"
)

// DistKinds lists every distribution kind.
func DistKinds() []DistKind { return []DistKind{Fixed, Uniform, Exponential} }

// Distribution is a hold time (locks, semaphore, leadership) or work time
// (queue consumers, barrier) distribution. The zero value (Kind empty)
// means fixed at DefaultHold; FixedHold(0) holds for no time at all.
type Distribution struct {
	// Kind is required for any other value than the default.
	Kind DistKind
	// Value is the fixed time.
	Value time.Duration
	// Min and Max bound a uniform distribution; Max also caps an
	// exponential one (0: no cap).
	Min, Max time.Duration
	// Mean of an exponential distribution.
	Mean time.Duration
}

// FixedHold returns a fixed distribution of d.
func FixedHold(d time.Duration) Distribution { return Distribution{Kind: Fixed, Value: d} }

// Effective returns d with every default applied.
func (d Distribution) Effective() Distribution {
	if d.Kind == "" {
		return FixedHold(DefaultHold)
	}
	return d
}

// MeanDuration is the distribution's expected value (ignoring an
// exponential's cap).
func (d Distribution) MeanDuration() time.Duration {
	d = d.Effective()
	switch d.Kind {
	case Uniform:
		return (d.Min + d.Max) / 2
	case Exponential:
		return d.Mean
	}
	return d.Value
}

func (d Distribution) String() string {
	d = d.Effective()
	switch d.Kind {
	case Uniform:
		return fmt.Sprintf("uniform %v..%v", d.Min, d.Max)
	case Exponential:
		if d.Max > 0 {
			return fmt.Sprintf("exponential mean %v max %v", d.Mean, d.Max)
		}
		return fmt.Sprintf("exponential mean %v", d.Mean)
	}
	return fmt.Sprintf("fixed %v", d.Value)
}

// RWLockParams are the rwlock recipe's parameters.
type RWLockParams struct {
	// ReadRatio is the fraction of operations that read, 0 to 1. A Spec
	// without an RWLock block reads with DefaultReadRatio; YAML that leaves
	// out read_ratio gets DefaultReadRatio too.
	ReadRatio float64
}

// SemaphoreParams are the semaphore recipe's parameters.
type SemaphoreParams struct {
	// Leases is how many clients may hold at once; defaults to DefaultLeases.
	Leases int
}

// QueueParams are the queue recipe's parameters. Clients are split into
// producers and consumers.
type QueueParams struct {
	// Producers defaults to Clients minus Consumers when Consumers is set,
	// otherwise to half the clients (at least 1).
	Producers int
	// Consumers defaults to the clients that are not producers.
	Consumers int
	// Items is how many items are produced in total, the queue's operation
	// count; it replaces Ops (setting both is an error). Zero: produce until
	// the run's duration ends.
	Items uint64
}

// BarrierParams are the barrier recipe's parameters.
type BarrierParams struct {
	// Size is how many clients enter each barrier together; defaults to
	// Clients. It must divide Clients.
	Size int
}

// Params holds every recipe's parameters; only the block of the scenario's
// recipe may be set.
type Params struct {
	RWLock    *RWLockParams
	Semaphore *SemaphoreParams
	Queue     *QueueParams
	Barrier   *BarrierParams
}

// Step is one run of a compare scenario. Everything but the recipe and
// its parameters is shared with the other steps.
type Step struct {
	// Name defaults to the recipe's name.
	Name        string
	Description string
	Recipe      Recipe
	Params
	// Thresholds apply to this step's run only, besides the scenario's.
	Thresholds []Threshold
}

// Spec is a scenario: what a load run does.
type Spec struct {
	// Name identifies the scenario; required (Load defaults it to the
	// file's base name).
	Name string
	// Description says what the scenario shows, in a paragraph.
	Description string
	// Recipe is required, except in a compare scenario, where each step
	// names its own.
	Recipe Recipe
	// Clients is the number of simulated clients, each its own ZooKeeper
	// session; defaults to DefaultClients (for a queue, to Producers plus
	// Consumers when both are set).
	Clients int
	// Locks is the number of distinct lock paths (queues, elections, ...);
	// clients are spread over them round robin. Defaults to DefaultLocks.
	Locks int
	// Duration bounds the run in time. At most one of Duration and Ops may
	// be set; with neither, Duration defaults to DefaultDuration.
	Duration time.Duration
	// Ops bounds the run by the number of operations (acquisitions,
	// elections, barrier rounds) over all clients.
	Ops uint64
	// Arrival is how clients issue operations.
	Arrival Arrival
	// RampUp is how many sessions are opened per second before the run
	// starts; defaults to DefaultRampUp.
	RampUp float64
	// Hold is how long a client holds what it acquired (for a queue: how
	// long a consumer works on an item); defaults to fixed DefaultHold.
	Hold Distribution
	// SessionTimeout is every client session's timeout; defaults to
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// ServerMaxSessionTimeout is the longest session timeout the local
	// ensemble's servers grant (zoo.cfg maxSessionTimeout); 0 keeps the
	// ensemble's (MaxSessionTimeout). Below SessionTimeout, every client
	// is granted less than it asks, as on a server configured stricter
	// than its clients: the recipes must count on the granted timeout.
	// Only a local ensemble takes it.
	ServerMaxSessionTimeout time.Duration
	// Ensemble is the number of members of the local ensemble started for
	// the run (ignored when the run targets existing servers); defaults to
	// DefaultEnsemble. Faults naming a member must fit in it.
	Ensemble int
	// Seed seeds every random choice of the run (Poisson arrivals, hold
	// times, random faults); defaults to DefaultSeed.
	Seed uint64
	// Params are the recipe's parameters.
	Params
	// Faults are injected during the run, by another package.
	Faults []Fault
	// Compare, when set, makes this a compare scenario: each step runs one
	// after the other with everything else shared.
	Compare []Step
	// IgnoreLost makes holders of locks and leaders ignore Lost(): a holder
	// whose grant ends under it (its session expired) keeps working on the
	// guarded resource until its hold time is up, as a buggy client would.
	// The run then shows the overlap with the next holder and the fencing
	// tokens that catch it. Lock recipes and election only.
	IgnoreLost bool
	// Thresholds are pass/fail criteria on the run's figures (see
	// Threshold): a run that does not meet one fails.
	Thresholds []Threshold

	src *source // positions of the fields, for a Spec that came from YAML
}

// Effective returns a copy of s with every default applied. Compare steps
// are kept; see Runs for one Spec per step.
func (s Spec) Effective() Spec {
	if s.Ensemble == 0 {
		s.Ensemble = DefaultEnsemble
	}
	if s.Clients == 0 {
		s.Clients = DefaultClients
		if q := s.Queue; s.Recipe == Queue && q != nil && q.Producers > 0 && q.Consumers > 0 {
			s.Clients = q.Producers + q.Consumers
		}
	}
	if s.Locks == 0 {
		s.Locks = DefaultLocks
	}
	items := s.Queue != nil && s.Queue.Items > 0
	if len(s.Arrival.Stages) > 0 && s.Ops == 0 {
		s.Duration = StagesDuration(s.Arrival.Stages) // the schedule's length
	}
	if s.Duration == 0 && s.Ops == 0 && !items {
		s.Duration = DefaultDuration
	}
	if s.Arrival.Kind == "" {
		s.Arrival.Kind = DefaultArrival
	}
	if s.RampUp == 0 {
		s.RampUp = RampUpFor(s.Clients)
	}
	s.Hold = s.Hold.Effective()
	if s.SessionTimeout == 0 {
		s.SessionTimeout = DefaultSessionTimeout
	}
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	s.Params = s.Params.effective(s.Recipe, s.Clients)
	if s.Recipe == Queue && s.Queue.Items > 0 {
		s.Ops = s.Queue.Items
	}
	s.Faults = slices.Clone(s.Faults)
	for i := range s.Faults {
		s.Faults[i] = s.Faults[i].Effective()
	}
	s.Compare = slices.Clone(s.Compare)
	for i, st := range s.Compare {
		st.Name = cmp.Or(st.Name, string(st.Recipe))
		st.Params = st.Params.effective(st.Recipe, s.Clients)
		s.Compare[i] = st
	}
	return s
}

// effective fills in the block of recipe r, copying it so the caller's
// Params are untouched, and leaves the other blocks alone.
func (p Params) effective(r Recipe, clients int) Params {
	switch r {
	case RWLock:
		q := RWLockParams{ReadRatio: DefaultReadRatio}
		if p.RWLock != nil {
			q = *p.RWLock
		}
		p.RWLock = &q
	case Semaphore:
		q := SemaphoreParams{}
		if p.Semaphore != nil {
			q = *p.Semaphore
		}
		if q.Leases == 0 {
			q.Leases = DefaultLeases
		}
		p.Semaphore = &q
	case Queue:
		q := QueueParams{}
		if p.Queue != nil {
			q = *p.Queue
		}
		switch {
		case q.Producers == 0 && q.Consumers == 0:
			q.Producers = max(clients/2, 1)
			q.Consumers = clients - q.Producers
		case q.Producers == 0:
			q.Producers = clients - q.Consumers
		case q.Consumers == 0:
			q.Consumers = clients - q.Producers
		}
		p.Queue = &q
	case Barrier:
		q := BarrierParams{}
		if p.Barrier != nil {
			q = *p.Barrier
		}
		if q.Size == 0 {
			q.Size = clients
		}
		p.Barrier = &q
	}
	return p
}

// Run is one run of a scenario with every default applied: the scenario
// itself, or one step of a compare scenario.
type Run struct {
	Spec           // effective; Compare is empty and Recipe is set
	Group   string // the compare scenario's name; empty for a single run
	Step    int    // index in the compare scenario
	OfSteps int    // number of steps in the compare scenario; 1 for a single run
}

// Runs expands s into the runs it stands for, in order: one per compare
// step, or s itself. Each run has every default applied. Runs does not
// validate; call Validate first.
func (s Spec) Runs() []Run {
	if len(s.Compare) == 0 {
		r := s.Effective()
		r.Thresholds = applying(s.Thresholds, r.Name)
		return []Run{{Spec: r, OfSteps: 1}}
	}
	runs := make([]Run, len(s.Compare))
	for i, st := range s.Compare {
		r := s
		r.Compare = nil
		r.Name = cmp.Or(st.Name, string(st.Recipe))
		r.Recipe = st.Recipe
		r.Description = cmp.Or(st.Description, s.Description)
		r.Params = st.Params
		r.Thresholds = append(applying(s.Thresholds, r.Name), st.Thresholds...)
		runs[i] = Run{Spec: r.Effective(), Group: s.Name, Step: i, OfSteps: len(s.Compare)}
	}
	return runs
}

// applying returns the thresholds of ts that apply to the run called name.
func applying(ts []Threshold, name string) []Threshold {
	var out []Threshold
	for _, t := range ts {
		if t.AppliesTo(name) {
			out = append(out, t)
		}
	}
	return out
}

// LockFor returns which of the Locks paths client i (0-based) uses:
// clients are spread round robin.
func (s Spec) LockFor(client int) int {
	n := s.Locks
	if n <= 0 {
		n = DefaultLocks
	}
	return client % n
}

// WithArrival returns s with its arrival replaced, for a command line's
// --arrival and --rate: kind "" keeps the scenario's kind, or makes it
// constant when a rate is given to a closed loop; a rate of 0 keeps the
// scenario's rate. A think time is kept for closed loops only. The result
// still needs Validate (an open model without a rate is a mistake).
func (s Spec) WithArrival(kind ArrivalKind, rate float64) Spec {
	a := s.Arrival
	if kind == "" {
		kind = a.Kind
		if rate > 0 && !kind.Open() {
			kind = Constant
		}
	}
	a.Kind = kind
	if kind.Open() {
		a.ThinkTime = 0
		if rate > 0 {
			a.Rate, a.Stages = rate, nil
		}
	} else {
		a.Rate, a.Stages = 0, nil
	}
	s.Arrival = a
	return s
}
