package inspect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// fourlwPoller asks every member its four-letter words once per snapshot,
// not on a clock of its own: the servers answer at the pace the inspector
// can use the answers, and a snapshot slowed by a busy ensemble slows the
// polls with it. Each member is polled in its own goroutine, at most one
// poll in flight per member, so a slow or dead member is reported with its
// last state (or as down) while the others keep updating: Poll waits for a
// member at most the poll timeout.
type fourlwPoller struct {
	members []fourlw.Member
	timeout time.Duration
	pollers []*fourlw.MemberPoller

	ctx    context.Context // ends with stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // member polls in flight

	mu       sync.Mutex
	latest   []fourlw.MemberStatus
	inFlight []chan struct{} // closed when the member's current poll ends; nil when none
	// caps is what each member's polls have shown it answers, command by
	// command (learnCaps); a command never asked is absent (unknown).
	caps []map[fourlw.Command]Capability
}

func newPoller(servers []string, admin map[string]string, tlsCfg *tls.Config, timeout time.Duration) *fourlwPoller {
	p := &fourlwPoller{timeout: timeout}
	for _, s := range servers {
		p.members = append(p.members, fourlw.Member{Addr: s, AdminURL: admin[s], TLS: tlsCfg})
	}
	// No start-up probe: it asked every command, wchp and dump included,
	// whatever --watch-budget said, and a server builds the whole reply
	// (2.7 MB of wchp at 100,000 watches) though the probe reads 512
	// bytes: each start stalled other clients' requests by 150-480 ms on
	// a 206,000-znode server (issue 26). What a member answers is learnt
	// from the polls themselves (learnCaps), which ask only what the
	// steady budget allows; a refused command falls back to the
	// AdminServer in package fourlw all the same.
	fp := fourlw.NewPoller(p.members, fourlw.WithTimeout(timeout), fourlw.WithProbe())
	for i := range p.members {
		p.pollers = append(p.pollers, fp.Member(i))
	}
	p.latest = make([]fourlw.MemberStatus, len(p.members))
	for i, m := range p.members {
		p.latest[i] = fourlw.MemberStatus{Member: m}
	}
	p.inFlight = make([]chan struct{}, len(p.members))
	p.caps = make([]map[fourlw.Command]Capability, len(p.members))
	for i := range p.caps {
		p.caps[i] = map[fourlw.Command]Capability{}
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// stop cancels the polls in flight and waits for them. Idempotent.
func (p *fourlwPoller) stop() {
	p.cancel()
	p.wg.Wait()
}

// Poll starts a poll of every member that has none in flight, asking the
// commands cmds returns for it, and waits until they end, ctx ends or the
// poll timeout passes; it returns each member's latest state.
func (p *fourlwPoller) Poll(ctx context.Context, cmds func(i int) []fourlw.Command) []memberPoll {
	waits := p.start(cmds)
	// A member's poll asks several commands, each within the timeout; a
	// member still answering after one timeout is left to finish on its
	// own and shows its previous state meanwhile.
	wait := time.NewTimer(p.timeout)
	defer wait.Stop()
	for _, done := range waits {
		if done == nil {
			continue
		}
		select {
		case <-done:
		case <-wait.C:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	return p.Latest()
}

// start starts a poll of every member that has none in flight and
// something to ask (cmds), and returns the channels that close when each
// member's poll in flight ends (nil: none).
func (p *fourlwPoller) start(cmds func(i int) []fourlw.Command) []chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	waits := make([]chan struct{}, 0, len(p.members))
	for i := range p.members {
		if p.inFlight[i] == nil && p.ctx.Err() == nil {
			// Nothing due (commandsFor): the member's last poll stands.
			if c := cmds(i); len(c) > 0 {
				done := make(chan struct{})
				p.inFlight[i] = done
				p.wg.Add(1)
				go p.pollMember(i, c, done)
			}
		}
		waits = append(waits, p.inFlight[i])
	}
	return waits
}

// Latest returns each member's latest state at once, without waiting for
// the polls in flight: a member whose first poll has not ended is Pending.
func (p *fourlwPoller) Latest() []memberPoll {
	p.mu.Lock()
	latest := slices.Clone(p.latest)
	caps := make([][]Capability, len(latest))
	for i := range caps {
		caps[i] = p.capsOf(i)
	}
	p.mu.Unlock()
	out := make([]memberPoll, len(latest))
	for i, st := range latest {
		out[i] = fromStatus(st)
		out[i].Caps = caps[i]
	}
	return out
}

func (p *fourlwPoller) pollMember(i int, cmds []fourlw.Command, done chan struct{}) {
	defer p.wg.Done()
	st := p.pollers[i].Poll(p.ctx, cmds...)
	p.mu.Lock()
	if p.ctx.Err() == nil || !p.latest[i].Polled {
		p.latest[i] = st
		learnCaps(p.caps[i], st)
	}
	p.inFlight[i] = nil
	p.mu.Unlock()
	close(done)
}

// fromStatus converts one member's poll.
func fromStatus(st fourlw.MemberStatus) memberPoll {
	mp := memberPoll{Addr: st.Member.Addr}
	switch {
	case !st.Polled:
		mp.Pending = true
		return mp
	case !st.Up:
		mp.Err = shortErr(st.Err)
		return mp
	}
	if s := st.Stat; s != nil {
		mp.Srvr = &srvrInfo{
			Mode: s.Mode, Version: s.Version, Zxid: int64(s.Zxid),
			LatencyMin: float64(s.LatencyMin), LatencyAvg: s.LatencyAvg, LatencyMax: float64(s.LatencyMax),
			Received: s.Received, Sent: s.Sent, Connections: int64(s.Connections),
			Outstanding: s.Outstanding, Znodes: s.NodeCount,
		}
	}
	if st.Mntr != nil {
		mp.Mntr = map[string]string(st.Mntr)
	}
	if st.Window != nil && !st.Window.Reset && st.Window.Elapsed > 0 {
		w := st.Window
		mp.Window = &windowInfo{RequestsPerSec: w.RequestsPerSecond(), LatencyAvg: w.AvgLatency()}
		for _, name := range fourlw.FanOutMetrics() {
			f := w.FanOut[name]
			mp.Window.FanOut = append(mp.Window.FanOut, FanOut{Event: fanOutEvent(name), Count: f.Events, Avg: f.PerEvent()})
		}
	}
	if _, asked := st.CmdTook[fourlw.CmdCons]; asked && st.Errors[fourlw.CmdCons] == nil {
		mp.Cons = make([]consEntry, 0, len(st.Conns))
		for _, c := range st.Conns {
			if !c.HasSession {
				continue
			}
			mp.Cons = append(mp.Cons, consEntry{Endpoint: c.Addr, Session: int64(c.Session), LastOp: c.LastOp,
				LatencyAvg: c.AvgLatency, LatencyMax: c.MaxLatency, Timeout: c.Timeout})
		}
	}
	mp.At, mp.Took, mp.WchpErr = st.At, st.CmdTook, st.Errors[fourlw.CmdWchp]
	if _, asked := st.CmdTook[fourlw.CmdWchp]; asked && mp.WchpErr == nil {
		mp.Wchp, mp.WchpAt = make(map[string][]int64, len(st.WatchesByPath)), st.At
		for path, ids := range st.WatchesByPath {
			s := make([]int64, len(ids))
			for i, id := range ids {
				s[i] = int64(id)
			}
			mp.Wchp[path] = s
		}
	}
	if _, asked := st.CmdTook[fourlw.CmdDump]; asked && st.Dump != nil {
		d := st.Dump
		di := &dumpInfo{Sessions: make(map[int64]time.Duration, len(d.Sessions)), Ephemerals: make(map[int64][]string, len(d.Ephemerals))}
		for _, s := range d.Sessions {
			di.Sessions[int64(s.ID)] = s.Timeout
		}
		for id, paths := range d.Ephemerals {
			di.Ephemerals[int64(id)] = paths
		}
		mp.Dump = di
	}
	return mp
}

// WhitelistLine is the server configuration line that allows exactly the
// four-letter words the inspector asks (keep any others already listed that
// other tools use, such as ruok).
func WhitelistLine() string {
	names := make([]string, 0, 5)
	for _, c := range commandsFor(nil, true, Shown{}, time.Time{}) {
		names = append(names, string(c))
	}
	return "4lw.commands.whitelist=" + strings.Join(names, ",")
}

// fanOutEvent turns "node_deleted_watch_count" into "deleted".
func fanOutEvent(metric string) string {
	return strings.TrimSuffix(strings.TrimPrefix(metric, "node_"), "_watch_count")
}

// learnCaps folds one poll into what the member is known to answer: a
// command answered (as a four-letter word or by the AdminServer) is
// available, one refused for the whitelist is not, with the line that
// enables it; a timeout or a member down says nothing about either.
func learnCaps(caps map[fourlw.Command]Capability, st fourlw.MemberStatus) {
	for cmd := range st.CmdTook {
		err := st.Errors[cmd]
		var refused *fourlw.ErrNotWhitelisted
		switch {
		case err == nil:
			caps[cmd] = Capability{Member: st.Member.Addr, Command: string(cmd), Available: true}
		case errors.As(err, &refused):
			caps[cmd] = Capability{Member: st.Member.Addr, Command: string(cmd), Enable: WhitelistLine()}
		}
	}
}

// capsOf lists member i's known capabilities in fourlw.DefaultCommands
// order. Called with p.mu held.
func (p *fourlwPoller) capsOf(i int) []Capability {
	var out []Capability
	for _, cmd := range fourlw.DefaultCommands() {
		if c, ok := p.caps[i][cmd]; ok {
			out = append(out, c)
		}
	}
	return out
}

// shortErr keeps errors short enough for a table cell and the status line.
func shortErr(err error) error {
	var refused *fourlw.ErrNotWhitelisted
	switch {
	case err == nil:
		return errors.New("not answering")
	case errors.As(err, &refused):
		return fmt.Errorf("%s not whitelisted", refused.Cmd)
	case errors.Is(err, context.DeadlineExceeded):
		return errors.New("no answer within the poll timeout")
	case errors.Is(err, fourlw.ErrNotServing):
		return errors.New("not serving requests (no quorum?)")
	}
	return err
}
