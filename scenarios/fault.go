package scenarios

import (
	"fmt"
	"time"
)

// Defaults for Fault fields left at their zero value.
const (
	DefaultFaultDuration = 2 * time.Second // how long a member stays down or paused, or connections stay delayed or dropped
	DefaultExpireRate    = 1.0             // sessions expired per second by expire-random
	DefaultExpireWindow  = time.Second     // how long one expire-random occurrence lasts
	DefaultConnFraction  = 1.0             // fraction of connections cut or dropped
)

// FaultKind names a fault.
type FaultKind string

// Fault kinds. Faults are carried out by the load generator's fault
// package; this package only parses and validates them.
const (
	// ExpireHolder expires the session of the current holder (lock or
	// semaphore holder, leader, consumer working on an item).
	ExpireHolder FaultKind = "expire-holder"
	// ExpireRandom expires Rate random client sessions per second for Duration.
	ExpireRandom FaultKind = "expire-random"
	// KillLeader SIGKILLs the ensemble's leader and restarts it after Duration.
	KillLeader FaultKind = "kill-leader"
	// KillMember SIGKILLs Member (a random one when 0) and restarts it after Duration.
	KillMember FaultKind = "kill-member"
	// PauseMember SIGSTOPs Member (a random one when 0) and SIGCONTs it after Duration.
	PauseMember FaultKind = "pause-member"
	// CutConnections closes a Rate fraction of client connections (to
	// Member only, when set) at once; clients reconnect.
	CutConnections FaultKind = "cut-connections"
	// DelayConnections delays every byte between clients and servers (of
	// Member only, when set) by Delay, for Duration.
	DelayConnections FaultKind = "delay-connections"
	// DropConnections silently drops the traffic of a Rate fraction of
	// client connections (to Member only, when set) for Duration.
	DropConnections FaultKind = "drop-connections"
	// LagMember makes Member (a random follower when 0) apply its leader's
	// transactions Delay late for Duration, while it keeps answering pings
	// and serving sessions: its clients read stale data. It needs a local
	// ensemble, whose quorum links then go through proxies.
	LagMember FaultKind = "lag-member"
	// ForeignDelete has another client (its own session), as an operator
	// or a buggy service would, delete Rate random waiters' nodes per
	// second for Duration (lock and election waiters, read/write lock
	// waiters, queue items).
	ForeignDelete FaultKind = "foreign-delete"
	// ForeignWrite has another client write to Rate random holders' nodes
	// per second for Duration, as Curator's Revoker or a buggy service
	// would (an ACL may refuse it: that is counted too).
	ForeignWrite FaultKind = "foreign-write"
	// PauseClient stops a client that holds a grant (any client when none
	// does) for Duration, as SIGSTOP or a long GC pause would: its
	// connections neither read nor write, its loop stops at its next
	// step. Past the session timeout the grant is lost, and its release
	// after the pause must say so (ErrLost).
	PauseClient FaultKind = "pause-client"
)

// DefaultForeignRate is the nodes per second foreign-delete and
// foreign-write act on by default.
const DefaultForeignRate = 1.0

// FaultKindSpec is one fault kind's record: the fields a schedule may set
// for it, their defaults, and what the run must provide to carry it out.
// Every property of a kind is read from here; the action itself is
// faults' (its actions table).
type FaultKindSpec struct {
	Kind FaultKind
	// Member, Duration, Rate and Delay say which optional Fault fields the
	// kind uses; setting another is a validation error.
	Member, Duration, Rate, Delay bool
	// DefaultDuration is Duration when left at 0 (used kinds only).
	DefaultDuration time.Duration
	// DefaultRate is Rate when left at 0 (used kinds only).
	DefaultRate float64
	// RatePerSecond: Rate is per second, not a fraction of connections (at most 1).
	RatePerSecond bool
	// DelayExample, when set, makes Delay required and shows how to set it.
	DelayExample string
	// On: the kind may cut on a request kind (Fault.On).
	On bool
	// NeedsLocalEnsemble: it acts on server processes, which only a local
	// ensemble started for the run allows.
	NeedsLocalEnsemble bool
	// NeedsProxies: it acts on client connections, through proxies
	// between the clients and the servers.
	NeedsProxies bool
	// NeedsQuorumProxies: it acts on the links between members, through
	// proxies a local ensemble is started with.
	NeedsQuorumProxies bool
	// Foreign: another client carries it out on the run's nodes.
	Foreign bool
	// PausesClients: it stops clients as paused processes (the load
	// generator then gives each client a faultproxy.Pauser).
	PausesClients bool
	// ReadLag is how many times Delay a read may stay behind a write
	// while the fault lasts (lag-member 1, delay-connections 2: a round trip).
	ReadLag int
	// Check is the kind's own rules, if any: the problems it finds.
	Check func(f Fault, c FaultContext) []FaultProblem
}

// FaultProblem is a problem a kind's Check found with one of the fault's fields.
type FaultProblem struct{ Field, Problem string }

// FaultContext is what a kind's Check may look at besides the fault.
type FaultContext struct {
	// Ensemble is the number of members.
	Ensemble int
	// Recipes are the recipes the fault applies to.
	Recipes []Recipe
}

// faultKinds is the one list of fault kinds, in the order users read them.
var faultKinds = []FaultKindSpec{
	{Kind: ExpireHolder, NeedsProxies: true,
		Check: func(_ Fault, c FaultContext) []FaultProblem {
			for _, r := range c.Recipes {
				if r.Spec().Holderless {
					return []FaultProblem{{"kind", fmt.Sprintf("expire-holder needs a holder, and a %s has none; use expire-random", r)}}
				}
			}
			return nil
		}},
	{Kind: ExpireRandom, Duration: true, DefaultDuration: DefaultExpireWindow,
		Rate: true, DefaultRate: DefaultExpireRate, RatePerSecond: true, NeedsProxies: true},
	{Kind: KillLeader, Duration: true, DefaultDuration: DefaultFaultDuration, NeedsLocalEnsemble: true},
	{Kind: KillMember, Member: true, Duration: true, DefaultDuration: DefaultFaultDuration, NeedsLocalEnsemble: true},
	{Kind: PauseMember, Member: true, Duration: true, DefaultDuration: DefaultFaultDuration, NeedsLocalEnsemble: true},
	{Kind: CutConnections, Member: true, Rate: true, DefaultRate: DefaultConnFraction, On: true, NeedsProxies: true},
	{Kind: DelayConnections, Member: true, Duration: true, DefaultDuration: DefaultFaultDuration,
		Delay: true, DelayExample: "the added latency, such as delay: 50ms", NeedsProxies: true, ReadLag: 2},
	{Kind: DropConnections, Member: true, Duration: true, DefaultDuration: DefaultFaultDuration,
		Rate: true, DefaultRate: DefaultConnFraction, NeedsProxies: true},
	{Kind: LagMember, Member: true, Duration: true, DefaultDuration: DefaultFaultDuration,
		Delay: true, DelayExample: "how late the follower applies transactions, such as delay: 1s",
		NeedsLocalEnsemble: true, NeedsQuorumProxies: true, ReadLag: 1,
		Check: func(f Fault, c FaultContext) []FaultProblem {
			var ps []FaultProblem
			if f.Delay > MaxLag {
				ps = append(ps, FaultProblem{"delay", fmt.Sprintf("%v is too long: a leader drops a follower that lags past its syncLimit (5 s); use at most %v", f.Delay, MaxLag)})
			}
			if c.Ensemble < 3 {
				ps = append(ps, FaultProblem{"kind", "lag-member needs a follower; set ensemble: 3"})
			}
			return ps
		}},
	{Kind: ForeignDelete, Duration: true, DefaultDuration: DefaultExpireWindow,
		Rate: true, DefaultRate: DefaultForeignRate, RatePerSecond: true, Foreign: true},
	{Kind: ForeignWrite, Duration: true, DefaultDuration: DefaultExpireWindow,
		Rate: true, DefaultRate: DefaultForeignRate, RatePerSecond: true, Foreign: true},
	{Kind: PauseClient, Duration: true, DefaultDuration: DefaultFaultDuration, PausesClients: true},
}

// FaultKinds lists every fault kind.
func FaultKinds() []FaultKind {
	ks := make([]FaultKind, len(faultKinds))
	for i, s := range faultKinds {
		ks[i] = s.Kind
	}
	return ks
}

// Spec returns k's record; ok is false for an unknown kind.
func (k FaultKind) Spec() (s FaultKindSpec, ok bool) {
	for _, s := range faultKinds {
		if s.Kind == k {
			return s, true
		}
	}
	return FaultKindSpec{}, false
}

// Valid reports whether k is one of FaultKinds.
func (k FaultKind) Valid() bool {
	_, ok := k.Spec()
	return ok
}

func (k FaultKind) spec() FaultKindSpec {
	s, _ := k.Spec()
	return s
}

// NeedsLocalEnsemble reports whether k acts on server processes, which only
// a local ensemble started for the run allows.
func (k FaultKind) NeedsLocalEnsemble() bool { return k.spec().NeedsLocalEnsemble }

// NeedsProxies reports the kinds that act on client connections, through
// proxies between the clients and the servers.
func (k FaultKind) NeedsProxies() bool { return k.spec().NeedsProxies }

// Foreign reports the kinds carried out by another client on the run's
// nodes.
func (k FaultKind) Foreign() bool { return k.spec().Foreign }

// NeedsQuorumProxies reports whether k acts on the links between members
// (FaultKindSpec.NeedsQuorumProxies).
func (k FaultKind) NeedsQuorumProxies() bool { return k.spec().NeedsQuorumProxies }

// Fault is one fault of a scenario. It happens once At, or, when Every is
// set, every Every (At must then be 0). The other fields apply to some
// kinds only (see FaultKind).
type Fault struct {
	// At is when the fault happens, from the start of the run; 0 is the start.
	At time.Duration
	// Every repeats the fault with this period, first at Every.
	Every time.Duration
	Kind  FaultKind
	// Member is the 1-based member id for kill-member, pause-member and the
	// connection faults; 0 means a random member (connection faults: all).
	Member int
	// Duration is how long the fault lasts; defaults to DefaultFaultDuration
	// (DefaultExpireWindow for expire-random). Unused by expire-holder and
	// cut-connections.
	Duration time.Duration
	// Rate is sessions per second for expire-random (defaults to
	// DefaultExpireRate), nodes per second for foreign-delete and
	// foreign-write (defaults to DefaultForeignRate), and the fraction of
	// connections, 0 to 1, for cut-connections and drop-connections
	// (defaults to DefaultConnFraction).
	Rate float64
	// Delay is the added latency of delay-connections and how late
	// lag-member's follower applies transactions; required there.
	Delay time.Duration
	// On, for cut-connections only, cuts one connection per occurrence
	// right after it sends the next request of this kind (FaultOnCreate,
	// FaultOnDelete, FaultOnSetData or FaultOnMulti; a multi also counts
	// as a delete, as a queue's acknowledgement deletes in one) to the
	// server: the request is carried out and its reply lost, the hardest
	// moment for a recipe. With Member set, only connections to that
	// member are cut (pair it with lag-member on the same member for lost
	// replies on a lagging member). Rate is then unused.
	On string
}

// Values of Fault.On.
const (
	FaultOnCreate  = "create"
	FaultOnDelete  = "delete"
	FaultOnSetData = "set-data"
	FaultOnMulti   = "multi"
)

// FaultOns lists the request kinds cut-connections can cut on.
func FaultOns() []string {
	return []string{FaultOnCreate, FaultOnDelete, FaultOnSetData, FaultOnMulti}
}

// MaxLag bounds lag-member's delay: a leader drops a follower whose
// acknowledgements are older than its syncLimit (5 s on the local
// ensembles zkherd starts), as it would in production.
const MaxLag = 4 * time.Second

// Repeats reports whether the fault happens more than once.
func (f Fault) Repeats() bool { return f.Every > 0 }

// Effective returns f with every default applied.
func (f Fault) Effective() Fault {
	s := f.Kind.spec()
	if f.Duration == 0 && s.Duration {
		f.Duration = s.DefaultDuration
	}
	if f.Rate == 0 && s.Rate && f.On == "" {
		f.Rate = s.DefaultRate
	}
	return f
}

// Occurrence returns when the n-th (0-based) occurrence of the fault
// starts, from the start of the run; ok is false when there is no such
// occurrence (a fault with no Every happens once).
func (f Fault) Occurrence(n int) (at time.Duration, ok bool) {
	switch {
	case n < 0:
		return 0, false
	case f.Every <= 0:
		if n > 0 {
			return 0, false
		}
		return f.At, true
	}
	return time.Duration(n+1) * f.Every, true
}
