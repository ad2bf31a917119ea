package inspect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// fourlwPoller relays fourlw.Poller's snapshots: every member is polled in
// its own goroutine, so a slow or dead member is reported down with its
// error while the others keep updating, and Poll never waits for a member.
type fourlwPoller struct {
	members []fourlw.Member
	timeout time.Duration
	period  time.Duration

	once   sync.Once
	first  chan struct{} // closed when the first snapshot arrived
	mu     sync.Mutex
	latest fourlw.Snapshot
	cancel context.CancelFunc
	done   chan struct{} // closed when the relay goroutine ended
}

func newPoller(servers []string, admin map[string]string, tlsCfg *tls.Config, period, timeout time.Duration) *fourlwPoller {
	p := &fourlwPoller{timeout: timeout, period: period, first: make(chan struct{}), done: make(chan struct{})}
	for _, s := range servers {
		p.members = append(p.members, fourlw.Member{Addr: s, AdminURL: admin[s], TLS: tlsCfg})
	}
	return p
}

// start begins polling; the relay goroutine runs until stop.
func (p *fourlwPoller) start() {
	p.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		p.cancel = cancel
		snaps := fourlw.NewPoller(p.members,
			fourlw.WithPeriod(p.period), fourlw.WithTimeout(p.timeout),
			fourlw.WithProbe(fourlw.DefaultCommands()...)).Start(ctx)
		go func() {
			defer close(p.done)
			firstSeen := false
			for s := range snaps {
				p.mu.Lock()
				p.latest = s
				p.mu.Unlock()
				if !firstSeen && allPolled(s) {
					firstSeen = true
					close(p.first)
				}
			}
			if !firstSeen {
				close(p.first)
			}
		}()
	})
}

// stop ends polling and waits for the relay goroutine. Idempotent.
func (p *fourlwPoller) stop() {
	p.start() // so that done is closed even if never started
	p.cancel()
	<-p.done
}

func allPolled(s fourlw.Snapshot) bool {
	for _, m := range s.Members {
		if !m.Polled {
			return false
		}
	}
	return true
}

// Poll returns the members' latest state, waiting (within ctx) only for the
// first poll of every member.
func (p *fourlwPoller) Poll(ctx context.Context) []memberPoll {
	p.start()
	select {
	case <-p.first:
	case <-ctx.Done():
	}
	p.mu.Lock()
	snap := p.latest
	p.mu.Unlock()
	out := make([]memberPoll, len(p.members))
	for i, m := range p.members {
		out[i] = memberPoll{Addr: m.Addr, Err: errors.New("not polled yet")}
		if i < len(snap.Members) {
			out[i] = fromStatus(snap.Members[i])
		}
	}
	return out
}

// fromStatus converts one member's poll.
func fromStatus(st fourlw.MemberStatus) memberPoll {
	mp := memberPoll{Addr: st.Member.Addr, Caps: capsFrom(st)}
	switch {
	case !st.Polled:
		mp.Err = errors.New("not polled yet")
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
	if _, failed := st.Errors[fourlw.CmdCons]; !failed {
		mp.Cons = make([]consEntry, 0, len(st.Conns))
		for _, c := range st.Conns {
			if !c.HasSession {
				continue
			}
			mp.Cons = append(mp.Cons, consEntry{Endpoint: c.Addr, Session: int64(c.Session), LastOp: c.LastOp,
				LatencyAvg: c.AvgLatency, LatencyMax: c.MaxLatency, Timeout: c.Timeout})
		}
	}
	if _, failed := st.Errors[fourlw.CmdWchp]; !failed {
		mp.Wchp = make(map[string][]int64, len(st.WatchesByPath))
		for path, ids := range st.WatchesByPath {
			s := make([]int64, len(ids))
			for i, id := range ids {
				s[i] = int64(id)
			}
			mp.Wchp[path] = s
		}
	}
	if d := st.Dump; d != nil {
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

// fanOutEvent turns "node_deleted_watch_count" into "deleted".
func fanOutEvent(metric string) string {
	return strings.TrimSuffix(strings.TrimPrefix(metric, "node_"), "_watch_count")
}

// capsFrom turns the member's start-up probe into Capabilities.
func capsFrom(st fourlw.MemberStatus) []Capability {
	if st.Caps == nil {
		return nil
	}
	mc := st.Caps
	caps := make([]Capability, 0, len(mc.Commands))
	for _, c := range mc.Commands {
		cp := Capability{Member: st.Member.Addr, Command: string(c.Command), Available: c.Available()}
		if !cp.Available {
			cp.Enable = c.Fix()
			if cp.Enable == "" && c.Err != nil {
				cp.Enable = "(" + shortErr(c.Err).Error() + ")"
			}
		}
		caps = append(caps, cp)
	}
	return caps
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
