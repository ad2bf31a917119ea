package faults

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/zkherd/zkherd/scenarios"
)

// What a Measure measures.
const (
	// LockBack: after a holder's session was expired, until its lock (or
	// election) was granted to someone else.
	LockBack = "lock_back"
	// HolderBack: after a leader kill, until any lock or election was
	// granted again (for an election, a recipe leader was in place again).
	HolderBack = "holder_back"
	// EnsembleLeaderBack: after a leader kill, until a member led again.
	EnsembleLeaderBack = "ensemble_leader_back"
	// ThroughputBack: after a fault began, until throughput was back to at
	// least half its rate in the second before the fault.
	ThroughputBack = "throughput_back"
)

// Measure is how long something took to come back after one fault.
type Measure struct {
	Fault scenarios.FaultKind
	// At is when the fault happened.
	At time.Time
	// What is measured: LockBack, HolderBack, EnsembleLeaderBack or
	// ThroughputBack.
	What string
	// Subject names what came back (a lock, "ensemble").
	Subject string
	// Took is how long it took; Recovered is false when it had not come
	// back by the end of the run.
	Took      time.Duration
	Recovered bool
	Detail    string
}

// Summary is what an Executor did and measured.
type Summary struct {
	// Occurrences counts faults carried out, ByKind by kind.
	Occurrences int
	ByKind      map[scenarios.FaultKind]int
	// SessionsExpired counts sessions expired (expire-holder and
	// expire-random).
	SessionsExpired int
	LeaderKills     int
	MemberKills     int
	Pauses          int
	// ConnectionsCut counts connections cut, CutsOnCreate and CutsOnDelete
	// those cut right after a create or a delete reached the server.
	ConnectionsCut             int
	CutsOnCreate, CutsOnDelete int
	// CutsOnSetData and CutsOnMulti count connections cut right after a
	// setData or a multi (cut-connections on set-data, multi).
	CutsOnSetData, CutsOnMulti int
	ConnectionsDropped         int
	Delays                     int
	// Lags counts lag-member occurrences, LagTime their total time.
	Lags    int
	LagTime time.Duration
	// ForeignDeletes and ForeignWrites count nodes another client deleted
	// or wrote to; ForeignRefused its writes an ACL refused.
	ForeignDeletes, ForeignWrites, ForeignRefused int
	// ClientPauses counts clients paused (pause-client), ClientPauseTime
	// their total time paused.
	ClientPauses    int
	ClientPauseTime time.Duration
	// Skipped counts occurrences that could not be carried out; Problems
	// says why (the first few).
	Skipped  int
	Problems []string
	// Measures are every recovery measured, in time order.
	Measures []Measure
	// SessionTimeout is the clients' session timeout.
	SessionTimeout time.Duration
}

// Stat sums up the measures of one kind.
type Stat struct {
	What string
	// Count measures, Recovered of which came back.
	Count, Recovered int
	// Mean, P50 and Max over the recovered ones.
	Mean, P50, Max time.Duration
}

// Stats sums up the measures by what they measure, in a fixed order.
func (s *Summary) Stats() []Stat {
	var out []Stat
	for _, what := range []string{LockBack, HolderBack, EnsembleLeaderBack, ThroughputBack} {
		st := Stat{What: what}
		var took []time.Duration
		var total time.Duration
		for _, m := range s.Measures {
			if m.What != what {
				continue
			}
			st.Count++
			if m.Recovered {
				st.Recovered++
				took = append(took, m.Took)
				total += m.Took
			}
		}
		if st.Count == 0 {
			continue
		}
		if len(took) > 0 {
			slices.Sort(took)
			st.Mean = total / time.Duration(len(took))
			st.P50 = took[(len(took)-1)/2]
			st.Max = took[len(took)-1]
		}
		out = append(out, st)
	}
	return out
}

// Describe says what a measure kind means, for reports.
func Describe(what string) string {
	switch what {
	case LockBack:
		return "lock granted again after its holder's session expired"
	case HolderBack:
		return "a lock or election granted again after a leader kill"
	case EnsembleLeaderBack:
		return "ensemble leader elected again after a leader kill"
	case ThroughputBack:
		return "throughput back to half its pre-fault rate"
	}
	return what
}

func (x *Executor) addMeasure(m *Measure) {
	x.mu.Lock()
	x.waiters = append(x.waiters, &waiter{m: m, slot: -2, resolved: true})
	x.mu.Unlock()
}

// await registers m, resolved by the next grant on slot (-1: any slot)
// after m.At. Register before the fault, so that no grant is missed.
func (x *Executor) await(m *Measure, slot int) *waiter {
	w := &waiter{m: m, slot: slot, after: m.At, what: m.What}
	x.mu.Lock()
	x.waiters = append(x.waiters, w)
	x.mu.Unlock()
	x.nwait.Add(1)
	return w
}

// unwait removes a waiter whose fault did not happen.
func (x *Executor) unwait(w *waiter) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if i := slices.Index(x.waiters, w); i >= 0 {
		x.waiters = slices.Delete(x.waiters, i, i+1)
		if !w.resolved {
			x.nwait.Add(-1)
		}
	}
}

// Granted tells the executor that slot (a lock or election of the run)
// was granted at at. The load generator calls it on every grant; it is
// cheap when no measure waits.
func (x *Executor) Granted(slot int, at time.Time) {
	if x.nwait.Load() == 0 {
		return
	}
	var events []Event
	x.mu.Lock()
	for _, w := range x.waiters {
		if w.resolved || w.preRate > 0 || (w.slot != slot && w.slot != -1) || !at.After(w.after) {
			continue
		}
		w.resolved = true
		x.nwait.Add(-1)
		w.m.Took, w.m.Recovered = at.Sub(w.m.At), true
		detail := fmt.Sprintf("%s granted again %v after its holder's session expired (session timeout %v)",
			w.m.Subject, roundDur(w.m.Took), x.opts.SessionTimeout)
		if w.m.What == HolderBack {
			detail = fmt.Sprintf("a lock or election granted again %v after the leader kill", roundDur(w.m.Took))
		}
		events = append(events, Event{At: at, Kind: EventRecover, Fault: w.m.Fault, Detail: detail})
	}
	x.mu.Unlock()
	for _, e := range events {
		x.emit(e)
	}
}

// Throughput sampling: the operations counter every sampleEvery, kept for
// historyKeep, to find the pre-fault rate and when it came back.
const (
	sampleEvery = 25 * time.Millisecond
	historyKeep = 3 * time.Second
	// rateWindow is the window rates are measured over.
	rateWindow = 250 * time.Millisecond
	// preWindow is the window the pre-fault rate is measured over.
	preWindow = time.Second
)

type opsSample struct {
	at  time.Time
	ops int64
}

// opsHistory is the recent samples, oldest first; guarded by Executor.mu.
type opsHistory []opsSample

// at returns the ops count at the last sample at or before t.
func (h opsHistory) at(t time.Time) (int64, bool) {
	i, _ := slices.BinarySearchFunc(h, t, func(s opsSample, t time.Time) int { return s.at.Compare(t) })
	if i < len(h) && h[i].at.Equal(t) {
		return h[i].ops, true
	}
	if i == 0 {
		return 0, false
	}
	return h[i-1].ops, true
}

// awaitThroughput registers a throughput measure for a fault at at, if
// there was throughput before it.
func (x *Executor) awaitThroughput(f scenarios.Fault, at time.Time) {
	if x.opts.Clients == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	before, ok1 := x.history.at(at.Add(-preWindow))
	now, ok2 := x.history.at(at)
	if !ok1 || !ok2 || now <= before {
		return
	}
	rate := float64(now-before) / preWindow.Seconds()
	m := &Measure{Fault: f.Kind, At: at, What: ThroughputBack, Subject: "throughput",
		Detail: fmt.Sprintf("%.0f ops/s before", rate)}
	x.waiters = append(x.waiters, &waiter{m: m, slot: -2, after: at, preRate: rate, what: ThroughputBack})
	x.nwait.Add(1)
}

// sample records the operations counter and resolves throughput measures
// until ctx ends.
func (x *Executor) sample(ctx context.Context) {
	if x.opts.Clients == nil {
		return
	}
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		now := time.Now()
		ops := x.opts.Clients.Ops()
		var events []Event
		x.mu.Lock()
		x.history = append(x.history, opsSample{at: now, ops: ops})
		cut := 0
		for cut < len(x.history) && now.Sub(x.history[cut].at) > historyKeep {
			cut++
		}
		x.history = slices.Delete(x.history, 0, cut)
		for _, w := range x.waiters {
			if w.resolved || w.preRate == 0 {
				continue
			}
			// The first window, starting at or after the fault, with at
			// least half the pre-fault rate.
			start := now.Add(-rateWindow)
			if start.Before(w.after) {
				continue
			}
			was, ok := x.history.at(start)
			if !ok || float64(ops-was)/rateWindow.Seconds() < w.preRate/2 {
				continue
			}
			w.resolved = true
			x.nwait.Add(-1)
			w.m.Took, w.m.Recovered = start.Sub(w.m.At), true
			if w.m.Took > 0 {
				events = append(events, Event{At: now, Kind: EventRecover, Fault: w.m.Fault,
					Detail: fmt.Sprintf("throughput back to half its pre-fault rate (%s) %v after the %s", w.m.Detail, roundDur(w.m.Took), w.m.Fault)})
			}
		}
		x.mu.Unlock()
		for _, e := range events {
			x.emit(e)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}
