package loadgen

import (
	"fmt"
	"time"

	"github.com/zkherd/zkherd/scenarios"
)

// Pacing: the open-loop dispatcher, the arrival schedule, the open model's
// rates, and the run's own waits (sleep, hold).

// dispatch hands out open-loop arrivals: the intended start of each
// operation, on the pacer's schedule, to whichever client is free.
func (r *runner) dispatch() {
	pacer := scenarios.PacerFor(r.run)
	open, _ := pacer.(scenarios.OpenPacer)
	ws := r.windowStartTime()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for n := uint64(0); ; n++ {
		wait, stop := pacer.Pace(time.Since(ws), n)
		if stop {
			return
		}
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-r.stopCh:
				return
			}
		}
		intended := time.Now()
		if open != nil {
			intended = ws.Add(open.Due(n))
		}
		select {
		case r.tickets <- intended:
			continue
		default:
		}
		wait0 := time.Now()
		select {
		case r.tickets <- intended:
			r.blocked.Add(int64(time.Since(wait0)))
		case <-r.stopCh:
			r.blocked.Add(int64(time.Since(wait0)))
			return
		}
	}
}

// openRates are an open-model run's target and achieved rates, and a
// warning when it achieved less than its target, saying who could not
// keep up: when the dispatcher waited for a free client for a good part
// of the window, every client was busy (the server was too slow for the
// rate with this many clients in flight); otherwise the generator itself
// fell behind its schedule. Zero for closed loops and partial runs.
func (r *runner) openRates(partial bool, win time.Duration, throughput float64) (target, achieved float64, warning string) {
	if !r.run.Arrival.Kind.Open() || partial {
		return 0, 0, ""
	}
	target = r.run.Arrival.TargetRate()
	if win <= 0 {
		return target, 0, ""
	}
	// The schedule's operations: a queue's are the producers' puts.
	who := fmt.Sprintf("all %d clients", r.run.Clients)
	achieved = throughput
	if q, ok := r.work.(*queueWork); ok {
		achieved, who = float64(q.putIn.Load())/win.Seconds(), fmt.Sprintf("all %d producers", q.producers)
	}
	if achieved >= 0.95*target {
		return target, achieved, ""
	}
	warning = fmt.Sprintf("target rate %.1f/s, achieved %.1f/s (%.0f%%): ", target, achieved, 100*achieved/target)
	if blocked := time.Duration(r.blocked.Load()); blocked > win/10 {
		warning += fmt.Sprintf("%s were busy for %.1fs of the %.1fs window, so the server could not keep up with this rate with that many operations in flight (add clients, or lower the rate)",
			who, blocked.Seconds(), win.Seconds())
	} else {
		warning += "the load generator fell behind its own schedule (this machine could not keep up; lower the rate or spread the load over processes)"
	}
	return target, achieved, warning
}

// next waits until client c may start its next operation and returns its
// intended start (zero for closed loops); ok is false when the client must
// stop.
func (r *runner) next(first bool) (intended time.Time, ok bool) {
	return r.nextOp(first, true)
}

// nextOp is next, with the run's operation budget taken or not (workloads
// that count operations their own way).
func (r *runner) nextOp(first, budget bool) (intended time.Time, ok bool) {
	if r.stopping() {
		return time.Time{}, false
	}
	if r.run.Arrival.Kind.Open() {
		select {
		case t, ok := <-r.tickets:
			return t, ok && !r.stopping()
		case <-r.stopCh:
			return time.Time{}, false
		}
	}
	if first {
		select {
		case <-r.loopsGo:
		case <-r.stopCh:
			return time.Time{}, false
		}
	} else if think := r.run.Arrival.ThinkTime; think > 0 && !r.sleep(think) {
		return time.Time{}, false
	}
	if !budget {
		return time.Time{}, true
	}
	if n := r.started.Add(1); r.run.Ops > 0 && n > r.run.Ops {
		return time.Time{}, false
	}
	return time.Time{}, true
}

// sleep waits d, or returns false at once when the run stops.
func (r *runner) sleep(d time.Duration) bool {
	if d <= 0 {
		return !r.stopping()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.stopCh:
		return false
	}
}

// hold holds for d, cut short when the run stops or lost closes; it
// reports whether lost closed.
func (r *runner) hold(d time.Duration, lost <-chan struct{}) (wasLost bool) {
	if d <= 0 {
		select {
		case <-lost:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-r.stopCh:
		return false
	case <-lost:
		return true
	}
}
