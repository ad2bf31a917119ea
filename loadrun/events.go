package loadrun

import (
	"context"
	"sync"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// Event is one thing a load run says while it goes. The Runner publishes
// its events, in the order they happened, to every channel made by
// Subscribe: one of the Event* types below. Data flows one way: the
// dashboard, the progress line, the JSON stream and the metrics endpoint
// read these channels, and nothing they do reaches back into the run
// (to stop it, end the context the run was given).
//
// A mode call (Run, Sweep, FindMax, Start, Join, Do) publishes, in order:
// one EventPlan, then for each run of the plan an EventStarting followed
// by its EventProgress reports (and EventNotice, EventInterval between
// them), then one EventEnded; then it closes the channels. A call that
// fails before its runs start publishes nothing and closes them.
type Event interface{ isEvent() }

// EventPlan opens the events: the plan about to run and where.
type EventPlan struct {
	Plan  *Plan
	Where Where
}

// EventStarting says run Index of the plan starts. Line says so for a log
// ("" when there is nothing to say).
type EventStarting struct {
	Index int
	Run   scenarios.Run
	Line  string
}

// EventProgress is the generator's report, once per interval and once
// when a run is done (State "done"). It carries every phase's summary and
// histogram, the timeline and the lock's wait graph only when a
// subscriber asked for WantDetail.
type EventProgress struct {
	loadgen.Progress
}

// EventNotice is a line the user should read (how connections are spread,
// a fault injected, a step of a search...).
type EventNotice struct {
	Line string
}

// EventInterval is one phase's closed interval of run Run (the values the
// run's HdrHistograms get), to subscribers that asked for WantIntervals.
type EventInterval struct {
	Run   string
	Phase metrics.Phase
	// Process, in a distributed run's starter, labels another process's
	// values (loadgen.ProcessLabel); "" for this process's.
	Process string
	// Values are the interval's latencies corrected for coordinated
	// omission (the report's headline), as value and count pairs.
	Values []ValueCount
}

// ValueCount is Count latencies of Micros microseconds, at the value
// HdrHistogram keeps for them (within 0.1%, its 3 significant digits).
type ValueCount struct {
	Micros, Count int64
}

// EventEnded closes the events: what executing the plan gave. The
// report is written (when the plan has an Out) before it is published.
type EventEnded struct {
	Outcome Outcome
}

func (EventPlan) isEvent()     {}
func (EventStarting) isEvent() {}
func (EventProgress) isEvent() {}
func (EventNotice) isEvent()   {}
func (EventInterval) isEvent() {}
func (EventEnded) isEvent()    {}

// Want says what a subscriber wants beyond what every event carries.
type Want int

const (
	// WantDetail fills every EventProgress with what the dashboard draws
	// (loadgen.Options.ProgressPhases: a few milliseconds per interval).
	WantDetail Want = 1 << iota
	// WantIntervals adds the EventInterval events (the metrics endpoint's
	// latency histograms).
	WantIntervals
)

// Subscribe returns a channel of the events of the Runner's next mode
// call (Run, Sweep, FindMax, Start, Join or Do): subscribe before making
// it. The Runner owns the channel and closes it after that call's last
// event. Events are never dropped, and publishing never waits for a
// subscriber: they queue until read, so read until the channel closes,
// or end ctx to stop reading (the channel then closes and the rest is
// dropped). A channel made after the call ended is closed at once.
func (r *Runner) Subscribe(ctx context.Context, want Want) <-chan Event {
	return r.hub().subscribe(ctx, want)
}

// hub is the Runner's one publisher.
func (r *Runner) hub() *hub {
	r.once.Do(func() { r.events = &hub{} })
	return r.events
}

// closeEvents closes every subscriber's channel (once their queue is
// delivered); later events go nowhere.
func (r *Runner) closeEvents() { r.hub().close() }

// endEvents closes the events and waits for the terminal to be free
// (TerminalFree) before the summary is written on it.
func (r *Runner) endEvents() {
	r.closeEvents()
	if r.TerminalFree != nil {
		<-r.TerminalFree
	}
}

// show publishes plan and where, runs exec with the hub as its sink, and
// publishes the outcome.
func (r *Runner) show(ctx context.Context, plan *Plan, where Where, exec func(context.Context, sink) Outcome) Outcome {
	h := r.hub()
	h.publish(EventPlan{Plan: plan, Where: where}, 0)
	out := exec(ctx, h)
	h.publish(EventEnded{Outcome: out}, 0)
	return out
}

// hub hands every event to each subscriber's queue. Its methods may be
// called from any goroutine of the run.
type hub struct {
	mu     sync.Mutex
	subs   []*subscriber
	closed bool
}

// subscriber is one channel's queue and the goroutine feeding it.
type subscriber struct {
	want  Want
	mu    sync.Mutex
	queue []Event
	ended bool          // the hub closed: deliver the queue, then close
	gone  bool          // the reader's ctx ended: queue nothing more
	more  chan struct{} // a wake-up, capacity 1
}

func (h *hub) subscribe(ctx context.Context, want Want) <-chan Event {
	out := make(chan Event)
	s := &subscriber{want: want, more: make(chan struct{}, 1)}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		close(out)
		return out
	}
	h.subs = append(h.subs, s)
	h.mu.Unlock()
	go s.feed(ctx, out)
	return out
}

// feed is the one goroutine that sends on out and closes it.
func (s *subscriber) feed(ctx context.Context, out chan<- Event) {
	defer close(out)
	for {
		s.mu.Lock()
		batch, ended := s.queue, s.ended
		s.queue = nil
		s.mu.Unlock()
		for _, ev := range batch {
			select {
			case out <- ev:
			case <-ctx.Done():
				s.leave()
				return
			}
		}
		if ended {
			return // nothing is queued after the hub closes
		}
		select {
		case <-s.more:
		case <-ctx.Done():
			s.leave()
			return
		}
	}
}

func (s *subscriber) leave() {
	s.mu.Lock()
	s.gone, s.queue = true, nil
	s.mu.Unlock()
}

// add queues ev unless the reader left.
func (s *subscriber) add(ev Event) {
	s.mu.Lock()
	if !s.gone && !s.ended {
		s.queue = append(s.queue, ev)
	}
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// publish queues ev for the subscribers that want at least only (0: all).
func (h *hub) publish(ev Event, only Want) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for _, s := range h.subs {
		if s.want&only == only {
			s.add(ev)
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for _, s := range h.subs {
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
		select {
		case s.more <- struct{}{}:
		default:
		}
	}
}

// wants reports whether a subscriber wants w.
func (h *hub) wants(w Want) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		if s.want&w != 0 {
			return true
		}
	}
	return false
}

// The hub is the sink of the runs it shows.

func (h *hub) Starting(i int, run scenarios.Run, line string) {
	h.publish(EventStarting{Index: i, Run: run, Line: line}, 0)
}

func (h *hub) Progress(p loadgen.Progress) { h.publish(EventProgress{Progress: p}, 0) }

func (h *hub) Notice(line string) { h.publish(EventNotice{Line: line}, 0) }

func (h *hub) LiveDetail() bool { return h.wants(WantDetail) }

// intervalHook returns run name's OnInterval when a subscriber wants
// intervals, nil otherwise. The interval's histograms are the
// recorder's and live only through the call: their values are copied.
func (h *hub) intervalHook(name string) func(metrics.Phase, *metrics.PhaseInterval) {
	if !h.wants(WantIntervals) {
		return nil
	}
	return func(p metrics.Phase, pi *metrics.PhaseInterval) {
		if pi.Corrected != nil {
			h.publish(EventInterval{Run: name, Phase: p, Values: IntervalValues(pi)}, WantIntervals)
		}
	}
}

// processIntervalHook is run name's hook for the
// other processes' intervals of a distributed run
// (distrib.Options.OnProcessInterval), nil when nobody wants them.
func (h *hub) processIntervalHook(name string) func(string, metrics.Phase, *metrics.PhaseInterval) {
	if !h.wants(WantIntervals) {
		return nil
	}
	return func(process string, p metrics.Phase, pi *metrics.PhaseInterval) {
		if pi.Corrected != nil {
			h.publish(EventInterval{Run: name, Phase: p, Process: process, Values: IntervalValues(pi)}, WantIntervals)
		}
	}
}

// IntervalValues copies the corrected values of pi (EventInterval.Values).
func IntervalValues(pi *metrics.PhaseInterval) []ValueCount {
	var values []ValueCount
	if pi.Corrected != nil {
		pi.Corrected.ForEachBucket(func(us, n int64) bool {
			values = append(values, ValueCount{Micros: us, Count: n})
			return true
		})
	}
	return values
}
