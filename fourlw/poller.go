package fourlw

import (
	"cmp"
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Poller defaults.
const (
	DefaultPeriod  = time.Second
	DefaultTimeout = 2 * time.Second
)

// DefaultCommands are what a Poller asks each member every period.
func DefaultCommands() []Command { return []Command{CmdSrvr, CmdMntr, CmdCons, CmdWchp, CmdDump} }

// PollerOption configures a Poller.
type PollerOption func(*Poller)

// WithTimeout bounds each request; defaults to DefaultTimeout.
func WithTimeout(d time.Duration) PollerOption { return func(p *Poller) { p.timeout = d } }

// WithCommands sets what each poll asks, in order; defaults to
// DefaultCommands. The first should be srvr or mntr: when it fails to
// reach the member, the rest are skipped.
func WithCommands(cmds ...Command) PollerOption {
	return func(p *Poller) { p.cmds = slices.Clone(cmds) }
}

// WithProbe sets the commands the start-up probe checks (see Probe);
// defaults to AllCommands. With none, there is no probe.
func WithProbe(cmds ...Command) PollerOption {
	return func(p *Poller) { p.probe = slices.Clone(cmds); p.noProbe = len(cmds) == 0 }
}

// Poller polls every member of an ensemble, each in its own goroutine, so
// that a slow or dead member is reported as down with its error while the
// others keep updating. It holds only configuration: Start may be called
// several times, each call polling on its own.
type Poller struct {
	members []Member
	period  time.Duration
	timeout time.Duration
	cmds    []Command
	probe   []Command
	noProbe bool
}

// NewPoller returns a poller of members.
func NewPoller(members []Member, opts ...PollerOption) *Poller {
	p := &Poller{members: slices.Clone(members), period: DefaultPeriod, timeout: DefaultTimeout, cmds: DefaultCommands()}
	for _, o := range opts {
		o(p)
	}
	if p.period <= 0 {
		p.period = DefaultPeriod
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if len(p.probe) == 0 && !p.noProbe {
		p.probe = AllCommands()
	}
	return p
}

// MemberStatus is what the last poll of one member found.
type MemberStatus struct {
	Member Member
	// Polled is false until the first poll of the member has finished.
	Polled bool
	// Up is set when the member answered at least one command of the last
	// poll. Err is why it is down, or else the first command that failed.
	Up  bool
	Err error
	// At is when the last poll finished; Took is how long it took.
	At   time.Time
	Took time.Duration
	// Caps is the start-up probe's result, nil until the member answered it.
	Caps *MemberCapabilities

	// The figures of the last poll; empty for commands not asked or that
	// failed (Errors says why), and for a member that is down.
	Stat             *Stat
	Mntr             Mntr
	Window           *Window // between this mntr and the previous one; nil until there are two
	Conns            []Conn
	WatchesByPath    WatchesByPath
	WatchesBySession WatchesBySession
	Dump             *Dump
	Conf             Conf
	Errors           map[Command]error
	// CmdTook is how long each command asked took, answered or not: the
	// commands absent were not asked.
	CmdTook map[Command]time.Duration
}

// Mode is the member's mode (leader, follower, standalone, ...), or ""
// when unknown.
func (s MemberStatus) Mode() string {
	switch {
	case s.Stat != nil:
		return s.Stat.Mode
	case s.Mntr != nil:
		return s.Mntr.ServerState()
	}
	return ""
}

// Snapshot is the state of every member, in the order given to the poller.
// It is never modified after delivery; its maps and slices are shared with
// later snapshots, so do not modify them either. A member's Window covers
// the time since its previous poll, which may belong to a snapshot the
// reader never received; for figures over longer spans, apply WindowOf to
// the Mntr of two snapshots.
type Snapshot struct {
	At      time.Time
	Members []MemberStatus
}

// Up returns the number of members up.
func (s Snapshot) Up() int {
	n := 0
	for _, m := range s.Members {
		if m.Up {
			n++
		}
	}
	return n
}

// Leader returns the member that reports itself leader (or standalone).
func (s Snapshot) Leader() (MemberStatus, bool) {
	for _, m := range s.Members {
		if md := m.Mode(); m.Up && (md == ModeLeader || md == ModeStandalone) {
			return m, true
		}
	}
	return MemberStatus{}, false
}

// Conns returns the connections with a session of every member that is
// up, each with its Member set, sorted by session.
func (s Snapshot) Conns() []Conn {
	var all []Conn
	for _, m := range s.Members {
		if !m.Up {
			continue
		}
		for _, c := range m.Conns {
			if c.HasSession {
				c.Member = m.Member
				all = append(all, c)
			}
		}
	}
	slices.SortFunc(all, func(a, b Conn) int { return cmp.Compare(a.Session, b.Session) })
	return all
}

// Conn returns the connection of session id, from any member.
func (s Snapshot) Conn(id SessionID) (Conn, bool) {
	for _, m := range s.Members {
		if !m.Up {
			continue
		}
		for _, c := range m.Conns {
			if c.HasSession && c.Session == id {
				c.Member = m.Member
				return c, true
			}
		}
	}
	return Conn{}, false
}

// Watcher is a session watching a path, and the member it is connected to.
type Watcher struct {
	Session SessionID
	Member  Member
}

// Watches merges every member's data watches (wchp): for each path, the
// sessions watching it. Child watches are not included; ZooKeeper does not
// list them.
func (s Snapshot) Watches() map[string][]Watcher {
	all := map[string][]Watcher{}
	for _, m := range s.Members {
		if !m.Up {
			continue
		}
		for path, ids := range m.WatchesByPath {
			for _, id := range ids {
				all[path] = append(all[path], Watcher{Session: id, Member: m.Member})
			}
		}
	}
	for _, ws := range all {
		slices.SortFunc(ws, func(a, b Watcher) int { return cmp.Compare(a.Session, b.Session) })
	}
	return all
}

// Ephemerals returns the ephemeral nodes of each session, from the dump of
// any member that is up (every member knows all of them).
func (s Snapshot) Ephemerals() map[SessionID][]string {
	for _, m := range s.Members {
		if m.Up && m.Dump != nil {
			return m.Dump.Ephemerals
		}
	}
	return nil
}

// Window adds up the windows of the members that are up: the ensemble's
// packets, requests and watch fan-out since the previous polls.
func (s Snapshot) Window() Window {
	var w Window
	for _, m := range s.Members {
		if m.Up && m.Window != nil {
			w = w.Add(*m.Window)
		}
	}
	return w
}

// Start polls until ctx ends and returns the channel on which snapshots
// arrive, one after each member's poll. The poller's own goroutine closes
// the channel once ctx has ended and every polling goroutine has returned;
// drain it until then. A reader slower than the polls receives the newest
// snapshot: snapshots are states, and an unread one is replaced, never
// queued.
func (p *Poller) Start(ctx context.Context) <-chan Snapshot {
	out := make(chan Snapshot)
	results := make(chan indexedStatus)
	var wg sync.WaitGroup
	for i, m := range p.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.watch(ctx, i, m, results)
		}()
	}
	go func() {
		defer close(out)
		state := make([]MemberStatus, len(p.members))
		for i, m := range p.members {
			state[i] = MemberStatus{Member: m}
		}
		var snap Snapshot
		pending := false
		for {
			var send chan<- Snapshot
			if pending {
				send = out
			}
			select {
			case r := <-results:
				state[r.index] = r.status
				snap = Snapshot{At: time.Now(), Members: slices.Clone(state)}
				pending = true
			case send <- snap:
				pending = false
			case <-ctx.Done():
				wg.Wait() // pollers give up sending once ctx has ended
				return
			}
		}
	}()
	return out
}

type indexedStatus struct {
	index  int
	status MemberStatus
}

// memberState is what one member's goroutine carries from poll to poll.
type memberState struct {
	client   *Client
	caps     *MemberCapabilities
	lastMntr Mntr
	lastAt   time.Time
}

// watch polls one member every period until ctx ends.
func (p *Poller) watch(ctx context.Context, i int, m Member, results chan<- indexedStatus) {
	ms := &memberState{client: NewClient(m)}
	tick := time.NewTicker(p.period)
	defer tick.Stop()
	for {
		st := p.poll(ctx, ms)
		if ctx.Err() != nil {
			return
		}
		select {
		case results <- indexedStatus{i, st}:
		case <-ctx.Done():
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// PollOnce polls every member once, in parallel, without a probe, and
// returns what they answered: for one-shot reports such as zkherd cluster
// status. Options other than WithCommands and WithTimeout are ignored.
func PollOnce(ctx context.Context, members []Member, opts ...PollerOption) Snapshot {
	p := NewPoller(members, opts...)
	p.noProbe, p.probe = true, nil
	snap := Snapshot{Members: make([]MemberStatus, len(members))}
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap.Members[i] = p.poll(ctx, &memberState{client: NewClient(m)})
		}()
	}
	wg.Wait()
	snap.At = time.Now()
	return snap
}

// MemberPoller polls one member when asked, rather than on a period:
// for callers that pace the four-letter words by their own work (the
// inspector polls once per snapshot) and choose per poll which commands
// are worth their cost. It carries from one poll to the next what a
// member's polls need (the start-up probe, the previous mntr for windows).
// One goroutine at a time may call Poll.
type MemberPoller struct {
	p  *Poller
	ms *memberState
}

// Member returns an on-demand poller of the i-th member given to
// NewPoller; it uses the poller's timeout and probe.
func (p *Poller) Member(i int) *MemberPoller {
	return &MemberPoller{p: p, ms: &memberState{client: NewClient(p.members[i])}}
}

// Poll asks the member cmds, in order (the poller's commands when none
// are given), each within the poller's timeout; the first poll also runs
// the start-up probe.
func (mp *MemberPoller) Poll(ctx context.Context, cmds ...Command) MemberStatus {
	if len(cmds) == 0 {
		cmds = mp.p.cmds
	}
	return mp.p.pollCmds(ctx, mp.ms, cmds)
}

// poll asks one member every command, each within the request timeout.
func (p *Poller) poll(ctx context.Context, ms *memberState) MemberStatus {
	return p.pollCmds(ctx, ms, p.cmds)
}

// pollCmds asks one member cmds, each within the request timeout.
func (p *Poller) pollCmds(ctx context.Context, ms *memberState, cmds []Command) MemberStatus {
	start := time.Now()
	m := ms.client.Member()
	st := MemberStatus{Member: m, Polled: true, Errors: map[Command]error{}, CmdTook: map[Command]time.Duration{}}
	if ms.caps == nil && !p.noProbe {
		pctx, cancel := context.WithTimeout(ctx, p.timeout)
		caps := ProbeMember(pctx, m, p.probe...)
		cancel()
		if caps.Reachable {
			ms.caps = &caps
			for _, c := range caps.Commands {
				if !c.FourLW && c.Admin {
					ms.client.preferAdmin(c.Command)
				}
			}
		}
	}
	st.Caps = ms.caps
	answered := false
	for _, cmd := range cmds {
		rctx, cancel := context.WithTimeout(ctx, p.timeout)
		began := time.Now()
		err := p.ask(rctx, ms, cmd, &st)
		st.CmdTook[cmd] = time.Since(began)
		cancel()
		if err == nil {
			answered = true
			continue
		}
		st.Errors[cmd] = err
		if st.Err == nil {
			st.Err = err
		}
		if unreachable(err) {
			break // the member does not answer: asking more would only wait more timeouts
		}
	}
	st.Up = answered && !errors.Is(st.Err, ErrNotServing)
	if !st.Up {
		st.Stat, st.Mntr, st.Window, st.Conns, st.WatchesByPath, st.WatchesBySession, st.Dump, st.Conf = nil, nil, nil, nil, nil, nil, nil, nil
	}
	st.At = time.Now()
	st.Took = st.At.Sub(start)
	return st
}

// ask runs one command and stores its result in st.
func (p *Poller) ask(ctx context.Context, ms *memberState, cmd Command, st *MemberStatus) error {
	c := ms.client
	var err error
	switch cmd {
	case CmdSrvr, CmdStat:
		var s Stat
		if cmd == CmdSrvr {
			s, err = c.Srvr(ctx)
		} else {
			s, err = c.Stat(ctx)
		}
		if err == nil {
			st.Stat = &s
		}
	case CmdMntr:
		var m Mntr
		if m, err = c.Mntr(ctx); err == nil {
			now := time.Now()
			st.Mntr = m
			if ms.lastMntr != nil {
				w := WindowOf(ms.lastMntr, m, now.Sub(ms.lastAt))
				st.Window = &w
			}
			ms.lastMntr, ms.lastAt = m, now
		}
	case CmdCons:
		st.Conns, err = c.Cons(ctx)
	case CmdWchp:
		st.WatchesByPath, err = c.Wchp(ctx)
	case CmdWchc:
		st.WatchesBySession, err = c.Wchc(ctx)
	case CmdDump:
		var d Dump
		if d, err = c.Dump(ctx); err == nil {
			st.Dump = &d
		}
	case CmdConf:
		st.Conf, err = c.Conf(ctx)
	default:
		_, err = QueryTLS(ctx, c.Member().Addr, string(cmd), c.Member().TLS)
	}
	return err
}

// unreachable reports whether err means the member did not answer at all
// (as opposed to refusing or failing one command).
func unreachable(err error) bool {
	var refused *ErrNotWhitelisted
	if errors.As(err, &refused) {
		return false
	}
	var netErr net.Error
	return errors.Is(err, ErrNotServing) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.As(err, &netErr)
}
