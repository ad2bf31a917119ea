package inspect

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// treePacer is the one budget of everything that reads the tree node by
// node: the walk that finds locks and queues, and the user's searches. It
// allows rate cost units a second (Options.WalkRate, DefaultWalkRate) (a unit is a request, or
// namesPerUnit names listed), whoever spends them, so that a search
// running beside the walk costs the servers no more than the walk alone; a
// search goes at the walk's pace while no walk runs, and they share it
// while one does.
//
// Paced from the first unit and request by request (issue 26, finding 9;
// issue 24's budget): each request waits for its own turn (request), so
// that the walk's requests reach a server one at a time, 1/rate s
// apart or more, from the start. The walk used to send its first 100
// units at once and then a chunk of 32 listings at a time, each followed
// by its wait: a start burst, and a burst every few seconds after it.
// Unused budget does not pile up beyond paceSlack (one request) while
// nothing reads, so a walk after an idle minute does not burst either.
//
// Names are charged after the fact (a listing's size is known once it is
// read, names): the balance goes below zero, and the next request waits
// until it is paid back, so the rate holds over any stretch longer than
// the largest listing's share.
type treePacer struct {
	// rate is the units a second (set once, by Open; 0: DefaultWalkRate).
	rate float64
	// searches counts the searches running: the walk yields to them.
	searches atomic.Int32

	mu      sync.Mutex
	balance float64 // units that may be spent now; negative: owed
	last    time.Time
}

// paceSlack is the most unused budget kept while nothing reads: one
// request may go at once after an idle time, never two.
const paceSlack = 1

// request waits, until ctx ends, for the budget to allow one more request,
// and takes its unit.
func (p *treePacer) request(ctx context.Context) {
	wait := p.take(time.Now(), 1)
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// yield waits, until ctx ends, while a search runs: the walk's requests
// give the whole budget to the search. Someone waits at the terminal for
// a search's hits, nobody for the walk's finds (the locks and queues that
// sessions own or watch show without it; the views say "scanning the
// tree…" until it ends), and with the two sharing the budget a search
// beside the first walk of a large tree went at half the pace (issue 26:
// 489 nodes searched in 60 s beside the walk). The servers see the same
// requests a second either way.
func (p *treePacer) yield(ctx context.Context) {
	for p.searches.Load() > 0 && ctx.Err() == nil {
		t := time.NewTimer(yieldPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// yieldPoll is how often a yielding walk looks whether the searches ended.
const yieldPoll = 100 * time.Millisecond

// searching marks a search running until the returned func is called.
func (p *treePacer) searching() (done func()) {
	p.searches.Add(1)
	return func() { p.searches.Add(-1) }
}

// names charges a listing of n names (namesPerUnit a unit) after it was
// read; the next request waits for it.
func (p *treePacer) names(n int) {
	if n > 0 {
		p.take(time.Now(), float64(n)/namesPerUnit)
	}
}

// take records units spent at now and returns how long the spender must
// wait for the budget to be paid back. The first take finds the budget
// empty: a start is paced from its first unit.
func (p *treePacer) take(now time.Time, units float64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	rate := p.rate
	if rate <= 0 {
		rate = DefaultWalkRate
	}
	if now.After(p.last) { // spenders' clocks read at once may come in any order
		if !p.last.IsZero() {
			p.balance = min(p.balance+now.Sub(p.last).Seconds()*rate, paceSlack)
		}
		p.last = now
	}
	p.balance -= units
	if p.balance >= 0 {
		return 0
	}
	return time.Duration(-p.balance / rate * float64(time.Second))
}
