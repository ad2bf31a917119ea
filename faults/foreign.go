package faults

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/scenarios"
)

// Foreign is the other client of foreign-delete and foreign-write: a
// session of its own that knows the run's nodes, as an operator with a
// shell or a buggy service would.
type Foreign interface {
	// Act carries out one foreign-delete (delete a random waiter's node)
	// or foreign-write (write to a random holder's node).
	Act(ctx context.Context, kind scenarios.FaultKind) (ForeignAct, error)
}

// ForeignAct is what one foreign action did.
type ForeignAct struct {
	// Path is the node acted on; empty when there was none to act on
	// (nobody waited or held).
	Path string
	// Refused says the server refused the action (an ACL): nothing
	// changed.
	Refused bool
	// What describes the node ("waiter of lock-000", "queue item").
	What string
}

// foreignWait bounds how long a foreign action waits for a node to act on.
const foreignWait = time.Second

// foreign carries out one occurrence of foreign-delete or foreign-write:
// Rate actions per second, evenly over Duration.
func (x *Executor) foreign(ctx context.Context, f scenarios.Fault) {
	n := max(1, int(math.Round(f.Rate*f.Duration.Seconds())))
	gap := f.Duration / time.Duration(n)
	verb := "deleted"
	if f.Kind == scenarios.ForeignWrite {
		verb = "wrote to"
	}
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	done := 0
	defer func() {
		if done > 0 {
			x.count(f, nil)
		}
	}()
	for k := range n {
		if k > 0 {
			timer.Reset(gap)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		var (
			act ForeignAct
			err error
		)
		deadline := time.Now().Add(foreignWait)
		for ctx.Err() == nil {
			act, err = x.opts.Foreign.Act(ctx, f.Kind)
			if err != nil || act.Path != "" || time.Now().After(deadline) {
				break
			}
			x.hold(ctx, 20*time.Millisecond)
		}
		switch {
		case ctx.Err() != nil && (err != nil || act.Path == ""):
			return // the run ended; an action carried out still counts
		case err != nil:
			x.skip(f, "%v", err)
			continue
		case act.Path == "":
			x.skip(f, "no node to act on for %v", foreignWait)
			continue
		}
		done++
		x.mu.Lock()
		switch {
		case act.Refused:
			x.sum.ForeignRefused++
		case f.Kind == scenarios.ForeignDelete:
			x.sum.ForeignDeletes++
		default:
			x.sum.ForeignWrites++
		}
		x.mu.Unlock()
		detail := fmt.Sprintf("another client %s %s %s (%d of %d)", verb, act.What, act.Path, k+1, n)
		if act.Refused {
			detail = fmt.Sprintf("another client tried to write to %s %s, refused by its ACL (%d of %d)", act.What, act.Path, k+1, n)
		}
		x.emit(Event{Kind: EventFault, Fault: f.Kind, Detail: detail})
	}
}

// lag carries out one occurrence of lag-member: f.Member, or a random
// follower, applies its leader's transactions f.Delay late for
// f.Duration.
func (x *Executor) lag(ctx context.Context, f scenarios.Fault) {
	id := f.Member
	// Who leads: to pick a follower, or to tell that the member leads.
	wait := time.Second
	if id == 0 {
		wait = leaderWait
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	leader, err := ensemble.AwaitLeader(lctx, x.opts.Ensemble, 0)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if id == 0 {
		var followers []int
		for _, m := range x.runningMembers() {
			if err != nil || m != leader {
				followers = append(followers, m)
			}
		}
		if len(followers) == 0 {
			x.skip(f, "no follower is running")
			return
		}
		x.mu.Lock()
		id = followers[x.rng.IntN(len(followers))]
		x.mu.Unlock()
	}
	leads := err == nil && id == leader
	if err := x.opts.Quorum.Lag(id, f.Delay); err != nil {
		x.skip(f, "%v", err)
		return
	}
	at := time.Now()
	detail := fmt.Sprintf("member %d applies its leader's transactions %v late for %v (it keeps answering pings and serving sessions)", id, f.Delay, f.Duration)
	if leads {
		detail += "; it leads now, so the lag acts once it follows"
	}
	x.emit(Event{At: at, Kind: EventFault, Fault: f.Kind, Member: id, Detail: detail})
	x.awaitThroughput(f, at)
	x.hold(ctx, f.Duration)
	x.opts.Quorum.Lag(id, 0)
	took := time.Since(at)
	x.count(f, func(s *Summary) {
		s.Lags++
		s.LagTime += took
	})
	x.emit(Event{Kind: EventRecover, Fault: f.Kind, Member: id,
		Detail: fmt.Sprintf("member %d applies transactions on time again (lagged %v)", id, roundDur(took))})
}
