package faults

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
