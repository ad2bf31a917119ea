package faults

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/scenarios"
)

// ErrBadFault is returned by New for a fault that cannot be carried out on
// the run's ensemble: a member it does not have, a server fault without a
// local ensemble.
var ErrBadFault = errors.New("faults: fault cannot be carried out")

// Event kinds; the same names as the report's.
const (
	EventFault   = "fault"
	EventRecover = "recover"
	// EventNote is a fault occurrence that could not be carried out.
	EventNote = "note"
)

// Event is a fault or a recovery at a moment of the run.
type Event struct {
	At     time.Time
	Kind   string // EventFault, EventRecover or EventNote
	Fault  scenarios.FaultKind
	Detail string
	// Member is the ensemble member concerned (1-based), 0 for none.
	Member int
	// Session is the client session concerned, 0 for none.
	Session int64
}

// Ensemble is the local ensemble server faults act on;
// *ensemble.Ensemble implements it.
type Ensemble interface {
	Members() []ensemble.Member
	Leader(ctx context.Context) (int, error)
	Kill(id int) error
	Restart(ctx context.Context, id int) error
	Pause(id int) error
	Resume(id int) error
	// Mode is the member's srvr mode; it fails while the member does not
	// serve (paused, electing, syncing with its leader).
	Mode(ctx context.Context, id int) (string, error)
}

// Holder is a client that holds something now: a lock, a lease, the
// leadership.
type Holder struct {
	// Slot is which lock (election...) of the run, from 0.
	Slot int
	// Name is what is held, for messages ("lock-000").
	Name    string
	Session int64
	Token   uint64
}

// Clients is what the executor needs to know of the run's clients.
type Clients interface {
	// Holders returns the current holders.
	Holders() []Holder
	// Ops returns the operations completed so far.
	Ops() int64
}

// ClientPauser is implemented by Clients that the pause-client fault can
// stop as paused processes.
type ClientPauser interface {
	// PauseClient stops a client that holds something now (any client
	// when none does): its connections neither read nor write and its
	// goroutines stop at their next step, as under SIGSTOP. who describes
	// it; resume undoes the pause. ok is false when no client can be
	// paused.
	PauseClient() (who string, session int64, resume func(), ok bool)
}

// Options configure an Executor.
type Options struct {
	// Faults is the schedule (defaults are applied by New).
	Faults []scenarios.Fault
	// Start is the origin of the faults' times: when operations began.
	Start time.Time
	// SessionTimeout is the session timeout the servers grant the clients
	// (not the one they ask: a server may grant less), which unavailability
	// is compared with.
	SessionTimeout time.Duration
	// Seed seeds the random choices (members, connections, sessions).
	Seed uint64
	// Ensemble is required by kill-leader, kill-member and pause-member.
	Ensemble Ensemble
	// Network is required by the connection faults and the expiries.
	Network *Network
	// Clients is required by expire-holder; it also gives the measures.
	Clients Clients
	// Quorum is required by lag-member: the proxies on the local
	// ensemble's quorum links.
	Quorum *Quorum
	// Foreign is required by foreign-delete and foreign-write: the other
	// client that acts on the run's nodes.
	Foreign Foreign
	// Grants says that the run's clients are granted locks or elections
	// and Granted is called for each grant: only then are the times until
	// the next grant measured.
	Grants bool
	// OnEvent receives every event as it happens, from the executor's
	// goroutines (and the proxies', for cuts on a request); it must not
	// block for long.
	OnEvent func(Event)
}

// Executor carries out a fault schedule; see Run.
type Executor struct {
	opts    Options
	members int

	mu      sync.Mutex
	rng     *rand.Rand
	sum     Summary
	waiters []*waiter
	nwait   atomic.Int64

	history opsHistory

	// out are the members server faults have taken out of the ensemble
	// and that are not back and serving yet (see reserveMember); outChanged
	// is closed and replaced whenever one comes back.
	outMu      sync.Mutex
	out        map[*outMember]struct{}
	outChanged chan struct{}
}

// outMember is one member a server fault took out, until it is back.
type outMember struct {
	fault scenarios.FaultKind
	id    int // 0 until the fault has picked its member
}

// waiter is a measure waiting for a grant or for throughput to come back.
type waiter struct {
	m        *Measure
	slot     int // grant on this slot; -1 any slot
	after    time.Time
	preRate  float64 // throughput waiters: ops/s before the fault
	what     string
	resolved bool
}

// New checks opts.Faults against what the run has (members, a local
// ensemble, proxies) and returns an executor for them.
func New(opts Options) (*Executor, error) {
	x := &Executor{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x6661756c7473)),
		out: make(map[*outMember]struct{}), outChanged: make(chan struct{})}
	switch {
	case opts.Ensemble != nil:
		x.members = len(opts.Ensemble.Members())
	case opts.Network != nil:
		x.members = opts.Network.Members()
	}
	x.opts.Faults = slices.Clone(opts.Faults)
	var errs []error
	for i, f := range x.opts.Faults {
		f = f.Effective()
		x.opts.Faults[i] = f
		if err := x.check(f); err != nil {
			errs = append(errs, fmt.Errorf("faults[%d] (%s): %w", i, f.Kind, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadFault, err)
	}
	x.sum.SessionTimeout = opts.SessionTimeout
	x.sum.ByKind = make(map[scenarios.FaultKind]int)
	return x, nil
}

func (x *Executor) check(f scenarios.Fault) error {
	a, ok := actions[f.Kind]
	if !f.Kind.Valid() || !ok {
		return fmt.Errorf("unknown kind %q", f.Kind)
	}
	if f.Kind.NeedsLocalEnsemble() && x.opts.Ensemble == nil {
		return errors.New("acts on server processes, which only a local ensemble started by zkherd allows")
	}
	if f.Kind.NeedsProxies() && x.opts.Network == nil {
		return errors.New("needs the fault proxies between clients and servers")
	}
	if f.Member < 0 || f.Member > x.members {
		return fmt.Errorf("member %d does not exist: the ensemble has %s", f.Member, memberList(x.members))
	}
	if f.On != "" && !slices.Contains(scenarios.FaultOns(), f.On) {
		return fmt.Errorf("cannot cut on %q requests; only on %v", f.On, scenarios.FaultOns())
	}
	if f.Kind.Foreign() && x.opts.Foreign == nil {
		return errors.New("needs a foreign client that knows the run's nodes")
	}
	if a.needs != nil {
		return a.needs(x)
	}
	return nil
}

func memberList(n int) string {
	switch n {
	case 0:
		return "no members"
	case 1:
		return "only member 1"
	}
	return fmt.Sprintf("members 1..%d", n)
}

// Run carries out the schedule until ctx ends, then undoes what is still
// in effect (restarts killed members, resumes paused ones, lifts delays
// and drops) and returns what happened. Faults happen at Start plus their
// time; an occurrence that is due while the previous one of the same fault
// is still going on starts when it ends, and a kill or pause of a member
// that would leave the ensemble without a quorum, with the members other
// server faults took out, starts when they are back and serving (its
// event says how long it waited, and for whom).
func (x *Executor) Run(ctx context.Context) *Summary {
	var wg sync.WaitGroup
	samplerDone := make(chan struct{})
	sctx, stopSampler := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(samplerDone)
		x.sample(sctx)
	}()
	for i, f := range x.opts.Faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.runFault(ctx, i, f)
		}()
	}
	wg.Wait()
	// Measures still resolve after the last fault, until the run ends.
	<-ctx.Done()
	if x.opts.Network != nil {
		x.opts.Network.disarm()
	}
	stopSampler()
	<-samplerDone
	x.mu.Lock()
	defer x.mu.Unlock()
	sum := x.sum
	sum.ByKind = make(map[scenarios.FaultKind]int)
	for k, v := range x.sum.ByKind {
		sum.ByKind[k] = v
	}
	sum.Measures = nil
	for _, w := range x.waiters {
		sum.Measures = append(sum.Measures, *w.m)
	}
	slices.SortStableFunc(sum.Measures, func(a, b Measure) int { return a.At.Compare(b.At) })
	return &sum
}

func (x *Executor) runFault(ctx context.Context, i int, f scenarios.Fault) {
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	for n := 0; ; n++ {
		at, ok := f.Occurrence(n)
		if !ok {
			return
		}
		if wait := time.Until(x.opts.Start.Add(at)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		} else if ctx.Err() != nil {
			return
		}
		x.occur(ctx, i, f)
	}
}

// emit hands an event to OnEvent.
func (x *Executor) emit(e Event) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if x.opts.OnEvent != nil {
		x.opts.OnEvent(e)
	}
}

// skip notes an occurrence that could not be carried out.
func (x *Executor) skip(f scenarios.Fault, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	x.mu.Lock()
	x.sum.Skipped++
	if len(x.sum.Problems) < maxProblems {
		x.sum.Problems = append(x.sum.Problems, fmt.Sprintf("%s: %s", f.Kind, msg))
	}
	x.mu.Unlock()
	x.emit(Event{Kind: EventNote, Fault: f.Kind, Detail: fmt.Sprintf("%s not carried out: %s", f.Kind, msg)})
}

// maxProblems bounds the problems listed in a Summary (all are counted).
const maxProblems = 20

func (x *Executor) count(f scenarios.Fault, fn func(s *Summary)) {
	x.mu.Lock()
	x.sum.Occurrences++
	x.sum.ByKind[f.Kind]++
	if fn != nil {
		fn(&x.sum)
	}
	x.mu.Unlock()
}

// occur carries out one occurrence of f.
func (x *Executor) occur(ctx context.Context, i int, f scenarios.Fault) {
	if a, ok := actions[f.Kind]; ok {
		a.run(x, ctx, f)
	}
}

// action is how the executor carries out one fault kind (its fields and
// needs are the kind's record in scenarios.FaultKindSpecs).
type action struct {
	run func(x *Executor, ctx context.Context, f scenarios.Fault)
	// needs, if set, says what the run lacks to carry the kind out, or nil.
	needs func(x *Executor) error
}

// actions holds one entry per fault kind: adding a kind is its record in
// scenarios/fault.go and its entry here.
var actions = map[scenarios.FaultKind]action{
	scenarios.ExpireHolder: {run: (*Executor).expireHolder, needs: func(x *Executor) error {
		if x.opts.Clients == nil {
			return errors.New("needs to know the holders")
		}
		return nil
	}},
	scenarios.ExpireRandom: {run: (*Executor).expireRandom},
	scenarios.KillLeader:   {run: (*Executor).kill},
	scenarios.KillMember:   {run: (*Executor).kill},
	scenarios.PauseMember:  {run: (*Executor).pause},
	scenarios.CutConnections: {run: func(x *Executor, _ context.Context, f scenarios.Fault) {
		if f.On != "" {
			x.armCut(f)
		} else {
			x.cut(f)
		}
	}},
	scenarios.DelayConnections: {run: (*Executor).delay},
	scenarios.DropConnections:  {run: (*Executor).drop},
	scenarios.LagMember: {run: (*Executor).lag, needs: func(x *Executor) error {
		if x.opts.Quorum == nil {
			return errors.New("needs the local ensemble's quorum links to go through proxies (started with faults.Quorum)")
		}
		return nil
	}},
	scenarios.PauseClient: {run: (*Executor).pauseClient, needs: func(x *Executor) error {
		if _, ok := x.opts.Clients.(ClientPauser); !ok {
			return errors.New("needs clients that can be paused (the load generator's)")
		}
		return nil
	}},
	scenarios.ForeignDelete: {run: (*Executor).foreign},
	scenarios.ForeignWrite:  {run: (*Executor).foreign},
}

// holderWait bounds how long expire-holder waits for someone to hold.
const holderWait = time.Second

func (x *Executor) expireHolder(ctx context.Context, f scenarios.Fault) {
	var holders []Holder
	deadline := time.Now().Add(holderWait)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		holders = x.opts.Clients.Holders()
		if len(holders) > 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
	if len(holders) == 0 {
		x.skip(f, "no holder to expire for %v (nobody held anything, or only paused clients did)", holderWait)
		return
	}
	x.mu.Lock()
	h := holders[x.rng.IntN(len(holders))]
	x.mu.Unlock()
	// The holder dies when its connection is cut, right at the start of
	// Expire.
	w := x.await(&Measure{Fault: f.Kind, At: time.Now(), What: LockBack, Subject: h.Name}, h.Slot)
	cut, err := x.opts.Network.Expire(ctx, h.Session)
	if err != nil {
		x.unwait(w)
		if ctx.Err() == nil {
			x.skip(f, "expire session 0x%x of %s's holder: %v", h.Session, h.Name, err)
		}
		return
	}
	x.count(f, func(s *Summary) { s.SessionsExpired++ })
	x.emit(Event{At: cut, Kind: EventFault, Fault: f.Kind, Session: h.Session,
		Detail: fmt.Sprintf("expired the session 0x%x of %s's holder (fencing token %d)", h.Session, h.Name, h.Token)})
}

func (x *Executor) expireRandom(ctx context.Context, f scenarios.Fault) {
	n := max(1, int(math.Round(f.Rate*f.Duration.Seconds())))
	gap := f.Duration / time.Duration(n)
	expired := map[int64]bool{}
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	done := 0
	for k := range n {
		if k > 0 {
			timer.Reset(gap)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		var candidates []int64
		for wait := 0; len(candidates) == 0 && wait < 40 && ctx.Err() == nil; wait++ {
			if wait > 0 {
				// Every connection is down (an election): wait for them.
				x.hold(ctx, 50*time.Millisecond)
			}
			for _, id := range x.opts.Network.Sessions() {
				if !expired[id] {
					candidates = append(candidates, id)
				}
			}
		}
		if len(candidates) == 0 {
			x.skip(f, "no client session to expire")
			continue
		}
		x.mu.Lock()
		id := candidates[x.rng.IntN(len(candidates))]
		x.mu.Unlock()
		expired[id] = true
		cut, err := x.opts.Network.Expire(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				x.skip(f, "expire session 0x%x: %v", id, err)
			}
			continue
		}
		done++
		x.mu.Lock()
		x.sum.SessionsExpired++
		x.mu.Unlock()
		x.emit(Event{At: cut, Kind: EventFault, Fault: f.Kind, Session: id,
			Detail: fmt.Sprintf("expired session 0x%x (%d of %d)", id, k+1, n)})
	}
	if done > 0 {
		x.count(f, nil)
	}
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

// leaderWait bounds how long kill-leader looks for a leader to kill, and
// how long it waits for the next one.
const leaderWait = 30 * time.Second

// restartTimeout bounds one restart of a killed member.
const restartTimeout = 90 * time.Second

func (x *Executor) kill(ctx context.Context, f scenarios.Fault) {
	ens := x.opts.Ensemble
	slot, waited, ok := x.reserveMember(ctx, f)
	if !ok {
		return
	}
	defer x.backMember(slot)
	var id int
	if f.Kind == scenarios.KillLeader {
		lctx, cancel := context.WithTimeout(ctx, leaderWait)
		var err error
		id, err = ensemble.AwaitLeader(lctx, ens, 0)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				x.skip(f, "no leader to kill: %v", err)
			}
			return
		}
	} else {
		var ok bool
		if id, ok = x.pickMember(f); !ok {
			x.skip(f, "no member is running")
			return
		}
	}
	var back *waiter
	if f.Kind == scenarios.KillLeader && x.opts.Grants {
		back = x.await(&Measure{Fault: f.Kind, At: time.Now(), What: HolderBack, Subject: "any lock or election"}, -1)
	}
	x.nameMember(slot, id)
	if err := ens.Kill(id); err != nil {
		if back != nil {
			x.unwait(back)
		}
		x.skip(f, "kill member %d: %v", id, err)
		return
	}
	at := time.Now()
	x.count(f, func(s *Summary) {
		if f.Kind == scenarios.KillLeader {
			s.LeaderKills++
		} else {
			s.MemberKills++
		}
	})
	what := "member"
	if f.Kind == scenarios.KillLeader {
		what = "leader, member"
	}
	x.emit(Event{At: at, Kind: EventFault, Fault: f.Kind, Member: id, Detail: fmt.Sprintf("SIGKILLed the %s %d (restart in %v)%s", what, id, f.Duration, waited)})
	x.awaitThroughput(f, at)
	var leaderDone chan struct{}
	if f.Kind == scenarios.KillLeader {
		m := &Measure{Fault: f.Kind, At: at, What: EnsembleLeaderBack, Subject: "ensemble"}
		x.addMeasure(m)
		leaderDone = make(chan struct{})
		go func() {
			defer close(leaderDone)
			x.watchLeader(ctx, m, id)
		}()
	}
	x.hold(ctx, f.Duration)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restartTimeout)
	start := time.Now()
	err := ens.Restart(rctx, id)
	if err != nil {
		// One more try: a port may have been slow to free.
		err = ens.Restart(rctx, id)
	}
	cancel()
	if err != nil {
		x.skip(f, "restart member %d: %v", id, err)
	} else {
		x.emit(Event{Kind: EventRecover, Fault: f.Kind, Member: id,
			Detail: fmt.Sprintf("member %d restarted and serving (took %v)", id, roundDur(time.Since(start)))})
	}
	if leaderDone != nil {
		<-leaderDone
	}
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

// pauseClient stops a holder for f.Duration, then resumes it; the run
// checks what it was told (loadgen's grantPaused).
func (x *Executor) pauseClient(ctx context.Context, f scenarios.Fault) {
	who, session, resume, ok := x.opts.Clients.(ClientPauser).PauseClient()
	if !ok {
		x.skip(f, "no client to pause")
		return
	}
	at := time.Now()
	x.emit(Event{At: at, Kind: EventFault, Fault: f.Kind, Session: session, Detail: fmt.Sprintf("paused %s for %v", who, f.Duration)})
	x.hold(ctx, f.Duration)
	resume()
	d := time.Since(at)
	x.count(f, func(s *Summary) { s.ClientPauses++; s.ClientPauseTime += d })
	x.emit(Event{Kind: EventRecover, Fault: f.Kind, Session: session, Detail: fmt.Sprintf("resumed session 0x%x after %v", session, roundDur(d))})
}

// hold waits d, or less when ctx ends.
func (x *Executor) hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// pickConns chooses a fraction of the open connections of member id (0:
// every member).
func (x *Executor) pickConns(id int, frac float64) (picked []conn, total int) {
	all := x.opts.Network.conns(id)
	n := int(math.Ceil(frac * float64(len(all))))
	x.mu.Lock()
	x.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	x.mu.Unlock()
	return all[:min(n, len(all))], len(all)
}

func where(member int) string {
	if member == 0 {
		return "every member"
	}
	return fmt.Sprintf("member %d", member)
}

func (x *Executor) cut(f scenarios.Fault) {
	picked, total := x.pickConns(f.Member, f.Rate)
	n := 0
	for _, c := range picked {
		if c.proxy.CutConn(c.id) {
			n++
		}
	}
	at := time.Now()
	x.count(f, func(s *Summary) { s.ConnectionsCut += n })
	x.emit(Event{At: at, Kind: EventFault, Fault: f.Kind, Member: f.Member,
		Detail: fmt.Sprintf("cut %d of %d client connections to %s", n, total, where(f.Member))})
	x.awaitThroughput(f, at)
}

func (x *Executor) armCut(f scenarios.Fault) {
	what := f.On
	if what == scenarios.FaultOnSetData {
		what = "setData"
	}
	x.opts.Network.armCut(f.On, f.Member, func(member, conn int) {
		var session int64
		if p := x.opts.Network.Proxy(member); p != nil {
			for _, l := range p.Links() {
				if l.Conn == conn {
					session = l.Session
				}
			}
		}
		x.count(f, func(s *Summary) {
			s.ConnectionsCut++
			switch f.On {
			case scenarios.FaultOnCreate:
				s.CutsOnCreate++
			case scenarios.FaultOnDelete:
				s.CutsOnDelete++
			case scenarios.FaultOnSetData:
				s.CutsOnSetData++
			case scenarios.FaultOnMulti:
				s.CutsOnMulti++
			}
		})
		x.emit(Event{Kind: EventFault, Fault: f.Kind, Member: member, Session: session,
			Detail: fmt.Sprintf("cut a connection to member %d right after a %s reached the server (reply lost)", member, what)})
	})
}

func (x *Executor) delay(ctx context.Context, f scenarios.Fault) {
	proxies := x.opts.Network.selected(f.Member)
	for _, p := range proxies {
		p.SetDelay(f.Delay)
	}
	at := time.Now()
	x.count(f, func(s *Summary) { s.Delays++ })
	x.emit(Event{At: at, Kind: EventFault, Fault: f.Kind, Member: f.Member,
		Detail: fmt.Sprintf("delayed client traffic to %s by %v each way for %v", where(f.Member), f.Delay, f.Duration)})
	x.awaitThroughput(f, at)
	x.hold(ctx, f.Duration)
	for _, p := range proxies {
		p.SetDelay(0)
	}
	x.emit(Event{Kind: EventRecover, Fault: f.Kind, Member: f.Member, Detail: "client traffic no longer delayed"})
}

func (x *Executor) drop(ctx context.Context, f scenarios.Fault) {
	picked, total := x.pickConns(f.Member, f.Rate)
	var dropped []conn
	for _, c := range picked {
		if c.proxy.DropConn(c.id, true) {
			dropped = append(dropped, c)
		}
	}
	at := time.Now()
	x.count(f, func(s *Summary) { s.ConnectionsDropped += len(dropped) })
	x.emit(Event{At: at, Kind: EventFault, Fault: f.Kind, Member: f.Member,
		Detail: fmt.Sprintf("silenced %d of %d client connections to %s for %v", len(dropped), total, where(f.Member), f.Duration)})
	x.awaitThroughput(f, at)
	x.hold(ctx, f.Duration)
	for _, c := range dropped {
		c.proxy.DropConn(c.id, false)
	}
	x.emit(Event{Kind: EventRecover, Fault: f.Kind, Member: f.Member, Detail: fmt.Sprintf("%d connections no longer silenced (those that lost packets were cut)", len(dropped))})
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
