package inspect

import (
	"fmt"
	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// What the inspector asks of the servers, and how it keeps that bounded on
// a production ensemble. Figures measured on ZooKeeper 3.8 with 206,000
// znodes, 2,000 sessions and 100,000 watches (docs/BENCHMARKS.md):
//   - wchp builds its whole reply while holding the server's watch table:
//     2.7 MB and ~43 ms of server CPU at 100,000 watches, and writes that
//     arrive meanwhile wait for it. It is asked only while a view shows
//     watches (SetNeedWatches), never on a member holding more watches than
//     the budget, and at most every pacedShare times its last duration, so
//     that it takes at most ~1% of a member's time. cons and dump, which
//     grow with the sessions and ephemerals, are paced the same way.
//   - all are asked once per snapshot at most, not on a clock of their
//     own: a snapshot that takes longer paces them too.
//   - the poll interval doubles (up to maxBackoff times) while a member
//     has more than busyOutstanding requests queued or its recent latency
//     is well above the lowest seen, and comes back once it is not.
const (
	// DefaultWatchBudget is the most watches (mntr zk_watch_count) a member
	// may hold for the inspector to ask it wchp.
	DefaultWatchBudget = 50000
	// pacedShare: cons, dump and wchp, whose replies grow with the
	// sessions, ephemerals and watches, are asked at most every pacedShare
	// times their last duration (wchp taking 43 ms: every 4.3 s), so that
	// each keeps under ~1% of a member's time.
	pacedShare = 100
	// maxBackoff bounds how far the poll interval stretches.
	maxBackoff = 16
	// busyOutstanding is the queued requests above which a member is busy.
	busyOutstanding = 10
	// busyLatency: a member whose latency since the previous poll is more
	// than busyLatency times the lowest seen, and at least busyLatencyMin
	// ms (a loaded test machine jitters by a few ms), is busy.
	busyLatency    = 4
	busyLatencyMin = 25.0
)

// watchPoll is what the inspector remembers of one member's costly
// answers (cons, dump, wchp): the last of each, reused until its adaptive
// period allows asking again.
type watchPoll struct {
	wchp   map[string][]int64 // last watch list; nil when none is usable
	wchpAt time.Time          // when wchp was taken
	cons   []consEntry
	dump   *dumpInfo
	next   map[fourlw.Command]time.Time // not asked again before
	count  int64                        // mntr zk_watch_count, -1 unknown
	lastAt time.Time                    // the poll the state was last updated from
	note   string                       // why the watch list is unknown
}

// due reports whether cmd's adaptive period has passed.
func (w *watchPoll) due(cmd fourlw.Command, now time.Time) bool {
	return !now.Before(w.next[cmd])
}

// wantWchp decides whether member w is asked wchp in the next poll.
func wantWchp(w *watchPoll, need, never bool, budget int, now time.Time) (bool, string) {
	switch {
	case never:
		return false, "watches not polled (--no-watches)"
	case !need:
		return false, "watches not polled: no view shows them"
	case w.count < 0:
		return false, "watch count not known yet"
	case budget >= 0 && w.count > int64(budget):
		return false, fmt.Sprintf("watches not listed: %d watches, above the budget of %d (--watch-budget)", w.count, budget)
	case !w.due(fourlw.CmdWchp, now):
		return false, ""
	}
	return true, ""
}

// commandsFor lists what a member is asked in the next poll: srvr and mntr
// always (small, constant-size replies), cons and dump when their period
// has passed, wchp when wantWchp says so.
func commandsFor(w *watchPoll, wchp bool, now time.Time) []fourlw.Command {
	cmds := []fourlw.Command{fourlw.CmdSrvr, fourlw.CmdMntr}
	for _, c := range []fourlw.Command{fourlw.CmdCons, fourlw.CmdDump} {
		if w == nil || w.due(c, now) {
			cmds = append(cmds, c)
		}
	}
	if wchp {
		cmds = append(cmds, fourlw.CmdWchp)
	}
	return cmds
}

// updateWatches folds one member's poll into w and fills p's cons, dump and
// watch list with what to use: this poll's answers, the previous ones while
// their adaptive period keeps them from being asked again, or nil
// (unknown).
func updateWatches(w *watchPoll, p *memberPoll, interval time.Duration, need, never bool, budget int) {
	if w.next == nil {
		w.next = map[fourlw.Command]time.Time{}
	}
	if v, ok := intKey(p.Mntr, "zk_watch_count"); ok {
		w.count = v
	}
	if p.Pending {
		return // nothing answered yet: nothing to fold in
	}
	if p.Err != nil {
		w.wchp, w.cons, w.dump, w.note, w.lastAt = nil, nil, nil, "", time.Time{}
		clear(w.next)
		return
	}
	if p.At.Equal(w.lastAt) {
		// The same poll as last time (the member's next one is in flight).
		p.Wchp, p.WchpAt, p.Cons, p.Dump = w.wchp, w.wchpAt, w.cons, w.dump
		return
	}
	w.lastAt = p.At
	period := func(took time.Duration) time.Time { return p.At.Add(max(interval, pacedShare*took)) }
	if took, asked := p.Took[fourlw.CmdCons]; asked {
		w.cons, w.next[fourlw.CmdCons] = p.Cons, period(took)
	}
	if took, asked := p.Took[fourlw.CmdDump]; asked {
		w.dump, w.next[fourlw.CmdDump] = p.Dump, period(took)
	}
	took, asked := p.Took[fourlw.CmdWchp]
	switch {
	case asked && p.WchpErr == nil:
		w.wchp, w.wchpAt, w.note = p.Wchp, p.At, ""
		w.next[fourlw.CmdWchp] = period(took)
	case asked:
		w.wchp, w.note = nil, "wchp: "+shortErr(p.WchpErr).Error()
		w.next[fourlw.CmdWchp] = p.At.Add(max(interval, 10*time.Second))
	default:
		if ok, why := wantWchp(w, need, never, budget, p.At); !ok && why != "" {
			w.wchp, w.note = nil, why
		}
	}
	p.Wchp, p.WchpAt, p.Cons, p.Dump = w.wchp, w.wchpAt, w.cons, w.dump
}

// nextBackoff doubles the interval's multiplier while busy, up to
// maxBackoff, and halves it back otherwise.
func nextBackoff(cur int, busy bool) int {
	if busy {
		return min(max(cur, 1)*2, maxBackoff)
	}
	return max(cur/2, 1)
}

// busyReason says why the members look busy, or "" when they do not.
// lowest holds each member's lowest recent latency seen, updated here.
func busyReason(c *Cluster, lowest map[string]float64) string {
	for _, m := range c.Members {
		if !m.Up {
			continue
		}
		if m.Outstanding > busyOutstanding {
			return fmt.Sprintf("%s has %d requests outstanding", m.Addr, m.Outstanding)
		}
		lat := m.RecentLatencyAvg
		if lat <= 0 {
			continue
		}
		low, ok := lowest[m.Addr]
		if !ok || lat < low {
			lowest[m.Addr], low = lat, lat
		}
		if lat >= busyLatencyMin && lat > busyLatency*low {
			return fmt.Sprintf("%s latency %.1f ms (lowest seen %.1f ms)", m.Addr, lat, low)
		}
	}
	return ""
}
