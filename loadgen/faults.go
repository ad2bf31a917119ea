package loadgen

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// faultRun is a run's faults and fencing: the proxies between clients and
// servers, the executor carrying out the scenario's faults, the holders it
// may expire, and the guarded resources of the run's locks. It exists for
// lock and election runs (fencing) and for runs with faults.
type faultRun struct {
	r      *runner
	net    *faults.Network
	x      atomic.Pointer[faults.Executor] // set once the faults start
	cancel context.CancelFunc
	done   chan *faults.Summary

	// fences are the guarded resources, by slot (lock, election).
	fences []*fence
	zombie bool // holders ignore Lost()
	// foreign is the other client of foreign-delete and foreign-write
	// (foreign.go), nil without them.
	foreign *foreigner

	mu      sync.Mutex
	holders map[int]faults.Holder // by slot
	// paused are the sessions of the clients paused now (pause-client),
	// which Holders leaves out.
	paused  map[int64]bool
	events  []Event
	summary *faults.Summary
}

// Event kinds of faults, as the report names them.
const (
	EventFault   = "fault"
	EventRecover = "recover"
)

// zombieWriteEvery is how often a holder that ignores Lost() writes to the
// guarded resource while it holds.
const zombieWriteEvery = 50 * time.Millisecond

// prepareFaults checks the scenario's faults against the servers the run
// targets, before anything is created, and sets up fencing.
func (r *runner) prepareFaults() error {
	run := r.run
	fenced := run.Recipe.Spec().Fenced
	if len(run.Faults) == 0 && !fenced {
		return nil
	}
	members := len(r.opts.Servers)
	if r.opts.Ensemble != nil {
		members = len(r.opts.Ensemble.Members())
	}
	if r.ownsFaults() {
		if err := run.Spec.ValidateEnsemble(members, r.opts.Ensemble != nil); err != nil {
			return fmt.Errorf("%w: %w", ErrBadOptions, err)
		}
	}
	fx := &faultRun{r: r, zombie: run.IgnoreLost, holders: make(map[int]faults.Holder), paused: make(map[int64]bool)}
	if fenced {
		for _, p := range pathsOf(r.ns, run.Recipe.Spec().Base, run.Locks) {
			fx.fences = append(fx.fences, newFence(p))
		}
	}
	r.fx = fx
	return nil
}

// hasFaults reports whether the run has faults, injected by this process
// or by another of a run spread over processes.
func (r *runner) hasFaults() bool { return r.fx != nil && len(r.run.Faults) > 0 }

// ownsFaults reports whether this process carries out the scenario's
// faults: in a run spread over processes only the starter (process 0)
// does, so that each fault happens, and shows in the timeline, once.
func (r *runner) ownsFaults() bool { return !r.opts.SharedNamespace || r.opts.Process == 0 }

// injects reports whether this process injects faults.
func (r *runner) injects() bool { return r.hasFaults() && r.ownsFaults() }

// serverFaultsOn reports whether faults that stop servers (kill, pause)
// are being carried out: the servers may then be out of reach for longer
// than a session timeout, on purpose, until the faults are undone.
func (r *runner) serverFaultsOn() bool {
	fx := r.fx
	if fx == nil || !r.hasFaults() {
		return false
	}
	fx.mu.Lock()
	on := fx.cancel != nil
	fx.mu.Unlock()
	if !r.ownsFaults() {
		// Another process carries them out, through the window.
		on = !r.windowStartTime().IsZero() && !r.stopping()
	}
	if !on {
		return false
	}
	for _, f := range r.run.Faults {
		if f.Kind.NeedsLocalEnsemble() {
			return true
		}
	}
	return false
}

// lockOptions are the options of the run's locks and elections. Under
// faults, a holder gives up at the first sign of a dropped connection
// (Curator's session error policy): a holder that waited out a session
// timeout, as the default policy does, could still believe it holds the
// lock after the servers expired its session and granted it to the next
// waiter.
func (r *runner) lockOptions() []recipes.LockOption {
	if !r.hasFaults() {
		return nil
	}
	return []recipes.LockOption{recipes.WithLostAfterSuspended(0)}
}

// startNetwork puts a fault proxy in front of every server when the
// faults need them; clients then connect through the proxies.
func (r *runner) startNetwork(ctx context.Context) error {
	r.fitSharedListings()
	if r.fx != nil && r.opts.SharedNamespace {
		for _, f := range r.fx.fences {
			f.shared = &znodeFence{conn: r.admin.Conn(), path: fencePath(f.path)}
		}
	}
	if err := r.startForeign(ctx); err != nil {
		return err
	}
	if f := r.fx.foreignClient(); f != nil {
		r.chk.excuse = f.excuse
	}
	if !r.injects() || !needsNetwork(r.run.Faults) {
		return nil
	}
	n, err := faults.NewNetwork(context.WithoutCancel(ctx), r.opts.Servers)
	if err != nil {
		return err
	}
	r.fx.net = n
	r.params.servers = n.Addrs()
	return nil
}

func needsNetwork(fs []scenarios.Fault) bool {
	for _, f := range fs {
		if f.Kind.NeedsProxies() {
			return true
		}
	}
	return false
}

// closeNetwork closes the proxies, once every session is closed.
func (r *runner) closeNetwork() {
	if r.fx != nil && r.fx.net != nil {
		r.fx.net.Close()
	}
	r.closeForeign()
}

// foreignClient returns the foreign client, nil when there is none.
func (fx *faultRun) foreignClient() *foreigner {
	if fx == nil {
		return nil
	}
	return fx.foreign
}

// startFaults starts carrying out the faults, timed from the window's
// start.
func (r *runner) startFaults() error {
	if !r.injects() || r.windowStartTime().IsZero() {
		return nil
	}
	fx := r.fx
	opts := faults.Options{
		Faults:         r.run.Faults,
		Start:          r.windowStartTime(),
		SessionTimeout: r.grantedTimeout(),
		Seed:           r.run.Seed,
		Network:        fx.net,
		Clients:        fx,
		Grants:         len(fx.fences) > 0,
		OnEvent:        fx.onEvent,
		Quorum:         r.opts.Quorum,
	}
	if fx.foreign != nil {
		opts.Foreign = fx.foreign
	}
	if r.opts.Ensemble != nil {
		opts.Ensemble = r.opts.Ensemble
	}
	x, err := faults.New(opts)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	fx.mu.Lock()
	fx.cancel, fx.done = cancel, make(chan *faults.Summary, 1)
	fx.x.Store(x)
	fx.mu.Unlock()
	go func() { fx.done <- x.Run(ctx) }()
	return nil
}

// stopFaults ends the faults and waits until their effects are undone
// (killed members restarted, paused ones resumed).
func (r *runner) stopFaults() {
	fx := r.fx
	if fx == nil {
		return
	}
	fx.mu.Lock()
	cancel, done := fx.cancel, fx.done
	fx.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	sum := <-done
	fx.mu.Lock()
	fx.summary = sum
	fx.cancel = nil
	fx.mu.Unlock()
}

// faultResult is the faults' part of the Result.
type faultResult struct {
	// events go to Result.Events after the checker's: the faults', then
	// overlaps a zombie scenario's fencing caught.
	events []Event
	// summary is Result.Faults, fencing Result.Fencing.
	summary *faults.Summary
	fencing *Fencing
	// notes go to Result.Notes: faults not carried out.
	notes []string
	// foreign is the foreign client's figures.
	foreign foreignResult
}

// faultResult returns the faults' events and summary, the fencing figures
// and the foreign client's; the fencing check's violations go to the
// checker, so the checker is read after it.
func (r *runner) faultResult() (out faultResult) {
	fx := r.fx
	if fx == nil {
		return out
	}
	fx.mu.Lock()
	out.events = append(out.events, fx.events...)
	out.summary = fx.summary
	fx.mu.Unlock()
	if sum := out.summary; sum != nil {
		for _, p := range sum.Problems {
			out.notes = append(out.notes, "faults: not carried out: "+p)
		}
	}
	if len(fx.fences) > 0 {
		out.fencing = r.fenceCheck(fx)
		for _, o := range out.fencing.Overlaps {
			if fx.zombie {
				out.events = append(out.events, Event{At: o.At, Kind: EventRecover, Detail: "overlap caught by fencing: " + o.String()})
			}
		}
	}
	if fl := fx.foreign; fl != nil {
		out.foreign = fl.result() // after the fencing check's excuses
	}
	return out
}

// fenceCheck is what the locks' guarded resources saw; outside a zombie
// scenario every overlap is a mutual exclusion violation, noted with the
// checker.
func (r *runner) fenceCheck(fx *faultRun) *Fencing {
	var excuse func(Overlap) bool
	if fl := fx.foreign; fl != nil {
		excuse = func(o Overlap) bool { return fl.excuseStale(o.Lock, o.StaleToken) }
	}
	f := fencing(fx.fences, fx.zombie, excuse)
	if fx.zombie {
		return f
	}
	for _, o := range f.Overlaps {
		r.chk.note("mutual exclusion", &r.chk.mutex, "overlapping holders: %s", o)
	}
	if n := f.OverlapCount - int64(len(f.Overlaps)); n > 0 {
		r.chk.mutex.Add(n)
	}
	return f
}

// faultEvents returns the faults injected so far, for progress reports.
func (r *runner) faultEvents() []Event {
	fx := r.fx
	if fx == nil {
		return nil
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	var out []Event
	for _, e := range fx.events {
		if e.Kind == EventFault {
			out = append(out, e)
		}
	}
	return out
}

// onEvent keeps a fault's event for the result.
func (fx *faultRun) onEvent(e faults.Event) {
	kind := e.Kind
	if kind == faults.EventNote {
		kind = EventNote
	}
	fx.mu.Lock()
	fx.events = append(fx.events, Event{At: e.At, Kind: kind, Detail: e.Detail})
	fx.mu.Unlock()
}

// Holders implements faults.Clients: the holders expire-holder may pick.
// A paused client's are left out: the expiry ends its session at once
// (closeSession), before any session timeout, and the next waiter is
// granted while the holder, stopped, cannot be told. No library can warn
// a stopped process of that (election-chaos counted two leaders at once:
// its leader paused and expired the same instant). The pause itself
// tests the holder past its session timeout.
func (fx *faultRun) Holders() []faults.Holder {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	out := make([]faults.Holder, 0, len(fx.holders))
	for _, h := range fx.holders {
		if !fx.paused[h.Session] {
			out = append(out, h)
		}
	}
	return out
}

// Ops implements faults.Clients.
func (fx *faultRun) Ops() int64 { return fx.r.ops.Load() }

// grantState is what a holder's grant needs between its hooks.
type grantState struct {
	fence   *fence
	token   uint64
	session int64
	slot    int
	// hist and part record the holder's writes on a lost grant, lastUse
	// the last of them.
	hist    *oracle.Buffer
	part    int32
	lastUse time.Time
}

// granted runs right after a holder entered its critical section: it
// writes its token to the lock's guarded resource, registers the holder
// for expire-holder, and tells the faults' measures. Holders that ignore
// Lost() leave the in-process check when the lock says they lost it (the
// lock's view), but keep writing to the resource.
func (r *runner) granted(c *client, h *held, s *recipes.Session, part int32) *grantState {
	fx := r.fx
	if fx == nil || h.token == nil || c.slot >= len(fx.fences) {
		return nil
	}
	gs := &grantState{fence: fx.fences[c.slot], token: h.token(), session: s.ID(), slot: c.slot, hist: c.hist, part: part}
	now := time.Now()
	gs.fence.write(gs.token, gs.session, false, now)
	fx.mu.Lock()
	fx.holders[c.slot] = faults.Holder{Slot: c.slot, Name: lastElem(gs.fence.path), Session: gs.session, Token: gs.token}
	fx.mu.Unlock()
	if x := fx.x.Load(); x != nil {
		x.Granted(c.slot, now)
	}
	if fx.zombie && h.exit != nil {
		h.exit = sync.OnceFunc(h.exit)
	}
	return gs
}

// holdGrant holds a grant for d. A holder that honours Lost() stops when
// it closes (and reports it); one that ignores it leaves the lock's view
// then, but keeps working on the resource for all of d.
func (r *runner) holdGrant(gs *grantState, h *held, d time.Duration) (wasLost bool) {
	if gs == nil || !r.fx.zombie {
		return r.hold(d, h.lost)
	}
	end := time.Now().Add(d)
	t := time.NewTimer(0)
	<-t.C
	defer t.Stop()
	lost := h.lost
	for {
		left := time.Until(end)
		if left <= 0 {
			return wasLost
		}
		t.Reset(min(left, zombieWriteEvery))
		select {
		case <-t.C:
			gs.write(wasLost, time.Now())
		case <-r.stopCh:
			return wasLost
		case <-lost:
			wasLost, lost = true, nil
			r.fx.unregister(gs)
			if h.exit != nil {
				h.exit() // the lock's view: no longer held
			}
		}
	}
}

// leaving runs when a holder leaves its critical section: a holder that
// honours Lost() writes once more only while it still holds; one that
// ignores it writes anyway.
func (r *runner) leaving(gs *grantState, h *held) {
	if gs == nil {
		return
	}
	lost := false
	select {
	case <-h.lost:
		lost = true
	default:
	}
	if !lost || r.fx.zombie {
		gs.write(lost, time.Now())
	}
	r.fx.unregister(gs)
}

func (fx *faultRun) unregister(gs *grantState) {
	fx.mu.Lock()
	if h, ok := fx.holders[gs.slot]; ok && h.Session == gs.session && h.Token == gs.token {
		delete(fx.holders, gs.slot)
	}
	fx.mu.Unlock()
}

func lastElem(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
