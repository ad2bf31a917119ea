package inspect

import (
	"context"
	"sync"
	"time"
)

// treePacer is the one budget of everything that reads the tree node by
// node: the walk that finds locks and queues, and the user's searches. It
// allows walkRate cost units a second (a unit is a request, or namesPerUnit
// names listed) and walkBurst at once, whoever spends them, so that a
// search running beside the walk costs the servers no more than the walk
// alone did when BenchmarkInspectorCost measured it; a search then goes at
// the walk's pace while no walk runs, and they share it while one does.
//
// Spending is after the fact (a listing's size is known once it is read):
// the balance may go below zero, and the next spender waits until it is
// paid back, so the rate holds over any stretch longer than a few chunks.
type treePacer struct {
	mu      sync.Mutex
	balance float64 // units that may be spent now; negative: owed
	last    time.Time
}

// spend takes units from the budget and waits, until ctx ends, for as
// long as the budget is overdrawn.
func (p *treePacer) spend(ctx context.Context, units int) {
	wait := p.take(time.Now(), units)
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

// take records units spent at now and returns how long the spender must
// wait for the budget to be paid back.
func (p *treePacer) take(now time.Time, units int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last.IsZero() {
		p.balance = walkBurst
	} else {
		p.balance = min(p.balance+now.Sub(p.last).Seconds()*walkRate, walkBurst)
	}
	p.last = now
	p.balance -= float64(units)
	if p.balance >= 0 {
		return 0
	}
	return time.Duration(-p.balance / walkRate * float64(time.Second))
}
