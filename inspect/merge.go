package inspect

import (
	"slices"
	"strings"
	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// memberPoll is what one member answered in one poll. Nil maps and slices
// mean the command did not answer (not whitelisted, timed out); Err means
// the member answered nothing at all.
type memberPoll struct {
	Addr string
	Err  error
	// Pending is set until the member's first poll has ended: nothing is
	// known of it yet (it is not down).
	Pending bool
	Srvr    *srvrInfo
	Mntr    map[string]string
	Cons    []consEntry
	// Wchp maps a path to the sessions holding a data watch on it.
	Wchp map[string][]int64
	Dump *dumpInfo
	Caps []Capability
	// Window is what the member did since its previous poll (from two
	// mntr replies); nil until there are two.
	Window *windowInfo
	// At is when the poll ended; Took holds how long each command asked
	// took (absent: not asked); WchpErr is why wchp failed.
	At      time.Time
	Took    map[fourlw.Command]time.Duration
	WchpErr error
	// WchpAt is when the watch list in Wchp was taken: At when wchp was
	// asked in this poll, earlier when an older list is reused.
	WchpAt time.Time
	// ConsAt is when the connection list in Cons was taken, likewise;
	// SrvrAt and MntrAt when Srvr and Mntr were.
	ConsAt, SrvrAt, MntrAt time.Time
}

type windowInfo struct {
	RequestsPerSec float64
	LatencyAvg     float64 // ms
	FanOut         []FanOut
}

type srvrInfo struct {
	Mode, Version                      string
	Zxid                               int64
	LatencyMin, LatencyAvg, LatencyMax float64
	Received, Sent                     int64
	Connections, Outstanding, Znodes   int64
}

type consEntry struct {
	Endpoint   string // "127.0.0.1:53764", without the leading "/"
	Session    int64  // 0 for a connection without a session yet
	LastOp     string
	LatencyAvg int64
	LatencyMax int64
	Timeout    time.Duration
}

type dumpInfo struct {
	// Sessions are the session ids the member's session tracker knows,
	// with their timeout when the dump says it (followers do), else 0.
	Sessions map[int64]time.Duration
	// Ephemerals maps a session to the ephemeral nodes it owns.
	Ephemerals map[int64][]string
}

// mergePolls combines the members' answers into one Cluster.
func mergePolls(at time.Time, polls []memberPoll) Cluster {
	c := Cluster{At: at, TotalWatches: -1, SessionsComplete: true, SessionsUnknown: true}
	sessions := map[int64]*Session{}
	get := func(id int64) *Session {
		s := sessions[id]
		if s == nil {
			s = &Session{ID: id}
			sessions[id] = s
		}
		return s
	}
	watches := map[string][]int64{}
	var total int64
	totalKnown := false
	for _, p := range polls {
		c.Members = append(c.Members, memberFrom(p))
		c.Capabilities = append(c.Capabilities, p.Caps...)
		if p.Pending {
			// Its sessions and watches are still to come.
			c.Pending, c.SessionsComplete, c.WatchesUnknown = true, false, true
			continue
		}
		if p.Err != nil {
			// A member that is down has no sessions of its own any more;
			// its clients are reconnecting elsewhere.
			continue
		}
		if p.Cons == nil {
			c.SessionsComplete = false
		}
		if p.Cons != nil || p.Dump != nil {
			c.SessionsUnknown = false
		}
		if p.Cons != nil && !p.ConsAt.IsZero() && (c.SessionsAt.IsZero() || p.ConsAt.Before(c.SessionsAt)) {
			c.SessionsAt = p.ConsAt
		}
		if p.Wchp == nil {
			c.WatchesUnknown = true
		}
		for _, e := range p.Cons {
			if e.Session == 0 {
				continue
			}
			s := get(e.Session)
			s.Endpoint, s.Member, s.LastOp = e.Endpoint, p.Addr, e.LastOp
			s.LatencyAvg, s.LatencyMax = e.LatencyAvg, e.LatencyMax
			if e.Timeout > 0 {
				s.Timeout = e.Timeout
			}
		}
		if p.Dump != nil {
			for id, timeout := range p.Dump.Sessions {
				s := get(id)
				if timeout > 0 && s.Timeout == 0 {
					s.Timeout = timeout
				}
			}
			for id, paths := range p.Dump.Ephemerals {
				s := get(id)
				s.Ephemerals = appendUnique(s.Ephemerals, paths...)
			}
		}
		if p.Wchp != nil {
			if c.WatchesAt.IsZero() || p.WchpAt.Before(c.WatchesAt) {
				c.WatchesAt = p.WchpAt
			}
			c.Members[len(c.Members)-1].WatchesAt = p.WchpAt
			for path, ids := range p.Wchp {
				c.ItemisedWatches += int64(len(ids))
				watches[path] = append(watches[path], ids...)
				for _, id := range ids {
					s := get(id)
					s.Watches = appendUnique(s.Watches, path)
				}
			}
			if v, ok := intKey(p.Mntr, "zk_watch_count"); ok {
				total += v
				totalKnown = true
			}
		}
	}
	if totalKnown {
		c.TotalWatches = total
	}
	c.Sessions = make([]Session, 0, len(sessions))
	for _, s := range sessions {
		slices.Sort(s.Ephemerals)
		slices.Sort(s.Watches)
		c.Sessions = append(c.Sessions, *s)
	}
	slices.SortFunc(c.Sessions, func(a, b Session) int { return cmpInt64(a.ID, b.ID) })
	c.Watches = make([]PathWatch, 0, len(watches))
	for path, ids := range watches {
		slices.SortFunc(ids, cmpInt64)
		c.Watches = append(c.Watches, PathWatch{Path: path, Sessions: slices.Compact(ids)})
	}
	slices.SortFunc(c.Watches, func(a, b PathWatch) int { return strings.Compare(a.Path, b.Path) })
	return c
}

func memberFrom(p memberPoll) Member {
	m := Member{Addr: p.Addr, Up: p.Err == nil && !p.Pending, Pending: p.Pending}
	if p.Pending {
		return m
	}
	if p.Err != nil {
		m.Err = p.Err.Error()
		return m
	}
	if s := p.Srvr; s != nil {
		m.Mode, m.Version, m.Zxid = s.Mode, s.Version, s.Zxid
		m.LatencyMin, m.LatencyAvg, m.LatencyMax = s.LatencyMin, s.LatencyAvg, s.LatencyMax
		m.Outstanding, m.Connections, m.Znodes = s.Outstanding, s.Connections, s.Znodes
		m.PacketsReceived, m.PacketsSent = s.Received, s.Sent
	}
	if p.Mntr != nil {
		mn := p.Mntr
		if m.Mode == "" {
			m.Mode = mn["zk_server_state"]
		}
		if m.Version == "" {
			m.Version = mn["zk_version"]
		}
		setInt(&m.Watches, mn, "zk_watch_count")
		setInt(&m.Ephemerals, mn, "zk_ephemerals_count")
		// The figures both answer are taken from the newer answer: mntr
		// goes minutes apart while no view shows it (Shown.Servers), srvr
		// every 15 s, and a queue building up showed as the mntr of two
		// minutes before (the back-off reads Outstanding too).
		if p.Srvr == nil || !p.MntrAt.Before(p.SrvrAt) {
			setInt(&m.Znodes, mn, "zk_znode_count")
			setInt(&m.Connections, mn, "zk_num_alive_connections")
			setInt(&m.Outstanding, mn, "zk_outstanding_requests")
			setInt(&m.PacketsReceived, mn, "zk_packets_received")
			setInt(&m.PacketsSent, mn, "zk_packets_sent")
		}
		if p.Srvr == nil {
			setFloat(&m.LatencyMin, mn, "zk_min_latency")
			setFloat(&m.LatencyAvg, mn, "zk_avg_latency")
			setFloat(&m.LatencyMax, mn, "zk_max_latency")
		}
		m.FanOut = fanOut(mn)
	}
	if w := p.Window; w != nil {
		m.RequestsPerSec, m.RecentLatencyAvg, m.RecentFanOut, m.RatesKnown = w.RequestsPerSec, w.LatencyAvg, w.FanOut, true
	}
	return m
}

// fanOut reads mntr's fan-out summaries (fourlw.FanOutMetrics).
func fanOut(mn map[string]string) []FanOut {
	var out []FanOut
	for _, name := range fourlw.FanOutMetrics() {
		s, ok := fourlw.Mntr(mn).Summary(name)
		if !ok {
			continue
		}
		out = append(out, FanOut{Event: fourlw.FanOutEvent(name), Count: s.Count, Avg: s.Avg, Max: s.Max})
	}
	return out
}

func appendUnique(dst []string, more ...string) []string {
	for _, s := range more {
		if !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
