package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/scenarios"
)

// The members server faults act on: which are running, which one a
// fault takes, the room a quorum leaves for taking one out (kill and
// pause wait for it), the leader's return, and pausing a member.

// outMember is one member a server fault took out, until it is back.
type outMember struct {
	fault scenarios.FaultKind
	id    int // 0 until the fault has picked its member
}

// runningMembers returns the ids of the members that are running.
func (x *Executor) runningMembers() []int {
	var ids []int
	for _, m := range x.opts.Ensemble.Members() {
		if m.State == ensemble.Running {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// pickMember returns f's member, or a random running one.
func (x *Executor) pickMember(f scenarios.Fault) (int, bool) {
	if f.Member != 0 {
		return f.Member, true
	}
	ids := x.runningMembers()
	if len(ids) == 0 {
		return 0, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return ids[x.rng.IntN(len(ids))], true
}

// reserveMember waits until one more member can be taken out of the
// ensemble without losing its quorum, counting the members other server
// faults took out and that are not back and serving yet, and reserves the
// room; backMember gives it back. A kill-leader due 10 s after a
// kill-member whose member is still restarting (a slow JVM start on a
// loaded machine) would otherwise leave one of three members: a quorum
// loss no scenario asked for, with expiries and a long election that the
// run then blames on the faults it did ask for. waited is "" or, for the
// fault's event, how long it waited and for which members. ok is false
// when ctx ended first.
//
// A one-member ensemble has room for its one member: killing it is what
// the scenario asks.
func (x *Executor) reserveMember(ctx context.Context, f scenarios.Fault) (slot *outMember, waited string, ok bool) {
	start := time.Now()
	var blockers []string
	quorum := x.members/2 + 1
	for {
		x.outMu.Lock()
		n := len(x.out)
		if n == 0 || x.members-n-1 >= quorum {
			slot = &outMember{fault: f.Kind}
			x.out[slot] = struct{}{}
			x.outMu.Unlock()
			break
		}
		for o := range x.out {
			if b := o.String(); !slices.Contains(blockers, b) {
				blockers = append(blockers, b)
			}
		}
		changed := x.outChanged
		x.outMu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			slices.Sort(blockers)
			x.skip(f, "waited %v for %s to be back and serving (no quorum without it) until the run ended",
				roundDur(time.Since(start)), strings.Join(blockers, " and "))
			return nil, "", false
		}
	}
	if len(blockers) > 0 {
		slices.Sort(blockers)
		waited = fmt.Sprintf(", after waiting %v for %s to be back and serving (no quorum without it)",
			roundDur(time.Since(start)), strings.Join(blockers, " and "))
	}
	return slot, waited, true
}

// nameMember records which member the fault holding slot took out.
func (x *Executor) nameMember(slot *outMember, id int) {
	x.outMu.Lock()
	slot.id = id
	x.outMu.Unlock()
}

// backMember gives back slot's room: its member is back and serving, or
// was never taken out, or its restart failed (reported as such; waiting
// for it would stop every later server fault).
func (x *Executor) backMember(slot *outMember) {
	x.outMu.Lock()
	delete(x.out, slot)
	close(x.outChanged)
	x.outChanged = make(chan struct{})
	x.outMu.Unlock()
}

// String names the member for the waiting fault's event ("member 2
// (kill-member)"); the caller holds outMu.
func (o *outMember) String() string {
	if o.id == 0 {
		return fmt.Sprintf("the member %s is taking out", o.fault)
	}
	return fmt.Sprintf("member %d (%s)", o.id, o.fault)
}

// watchLeader measures how long the ensemble takes to have a leader
// again after member killed, the leader, was killed.
func (x *Executor) watchLeader(ctx context.Context, m *Measure, killed int) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaderWait)
	defer cancel()
	id, err := ensemble.AwaitLeader(wctx, x.opts.Ensemble, killed)
	if err != nil {
		// A one-member ensemble has no leader until the member is back.
		if x.members == 1 {
			id, err = ensemble.AwaitLeader(wctx, x.opts.Ensemble, 0)
		}
		if err != nil {
			return
		}
	}
	took := time.Since(m.At)
	x.mu.Lock()
	m.Took, m.Recovered = took, true
	m.Detail = fmt.Sprintf("member %d", id)
	x.mu.Unlock()
	x.emit(Event{Kind: EventRecover, Fault: m.Fault, Member: id,
		Detail: fmt.Sprintf("the ensemble has a leader again, member %d, %v after the kill", id, roundDur(took))})
}

func (x *Executor) pause(ctx context.Context, f scenarios.Fault) {
	slot, waited, ok := x.reserveMember(ctx, f)
	if !ok {
		return
	}
	defer x.backMember(slot)
	id, ok := x.pickMember(f)
	if !ok {
		x.skip(f, "no member is running")
		return
	}
	x.nameMember(slot, id)
	ens := x.opts.Ensemble
	if err := ens.Pause(id); err != nil {
		x.skip(f, "pause member %d: %v", id, err)
		return
	}
	at := time.Now()
	x.count(f, func(s *Summary) { s.Pauses++ })
	x.emit(Event{At: at, Kind: EventFault, Fault: f.Kind, Member: id, Detail: fmt.Sprintf("SIGSTOPped member %d for %v%s", id, f.Duration, waited)})
	x.awaitThroughput(f, at)
	x.hold(ctx, f.Duration)
	if err := ens.Resume(id); err != nil {
		x.skip(f, "resume member %d: %v", id, err)
		return
	}
	resumed := time.Now()
	x.emit(Event{At: resumed, Kind: EventRecover, Fault: f.Kind, Member: id, Detail: fmt.Sprintf("SIGCONTed member %d", id)})
	// A follower stopped for longer than the leader waits for it has been
	// dropped, and serves again only after it has synced: until then it
	// is still out (reserveMember).
	if err := x.awaitServing(ctx, id); err != nil {
		x.skip(f, "member %d resumed but not serving: %v", id, err)
		return
	}
	if took := time.Since(resumed); took >= 100*time.Millisecond {
		x.emit(Event{Kind: EventRecover, Fault: f.Kind, Member: id,
			Detail: fmt.Sprintf("member %d serving again %v after it was resumed", id, roundDur(took))})
	}
}

// awaitServing polls member id's srvr until it serves, for up to
// restartTimeout (even after ctx ended: the run's end undoes its faults).
func (x *Executor) awaitServing(ctx context.Context, id int) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restartTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		qctx, qcancel := context.WithTimeout(wctx, 2*time.Second)
		_, err := x.opts.Ensemble.Mode(qctx, id)
		qcancel()
		if err == nil {
			return nil
		}
		select {
		case <-tick.C:
		case <-wctx.Done():
			return fmt.Errorf("%w (last: %v)", wctx.Err(), err)
		}
	}
}
