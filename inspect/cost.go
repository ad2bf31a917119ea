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
//     the budget, and at most every wchpShare times its last duration, so
//     that it takes at most ~1% of a member's time.
//   - srvr, mntr, cons and dump are asked once per snapshot, not on a
//     clock of their own: a snapshot that takes longer paces them too.
//   - the poll interval doubles (up to maxBackoff times) while a member
//     has more than busyOutstanding requests queued or its recent latency
//     is well above the lowest seen, and comes back once it is not.
const (
	// DefaultWatchBudget is the most watches (mntr zk_watch_count) a member
	// may hold for the inspector to ask it wchp.
	DefaultWatchBudget = 50000
	// wchpShare: wchp is asked at most every wchpShare times its last
	// duration (43 ms -> every 4.3 s).
	wchpShare = 100
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

// watchPoll is what the inspector remembers of one member's watch lists.
type watchPoll struct {
	wchp    map[string][]int64 // last answer; nil when none is usable
	next    time.Time          // not asked again before
	count   int64              // mntr zk_watch_count, -1 unknown
	lastAt  time.Time          // the poll the state was last updated from
	note    string             // why the watch list is unknown
	latency float64            // lowest recent latency seen (ms), 0 unknown
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
	case now.Before(w.next):
		return false, ""
	}
	return true, ""
}

// commandsFor lists what a member is asked in the next poll.
func commandsFor(wchp bool) []fourlw.Command {
	cmds := []fourlw.Command{fourlw.CmdSrvr, fourlw.CmdMntr, fourlw.CmdCons, fourlw.CmdDump}
	if wchp {
		cmds = append(cmds, fourlw.CmdWchp)
	}
	return cmds
}

// updateWatches folds one member's poll into w and sets p.Wchp to the
// watch list to use: this poll's, the previous one while the adaptive
// period keeps wchp from being asked again, or nil (unknown).
func updateWatches(w *watchPoll, p *memberPoll, interval time.Duration, need, never bool, budget int) {
	if v, ok := intKey(p.Mntr, "zk_watch_count"); ok {
		w.count = v
	}
	if p.At.Equal(w.lastAt) {
		p.Wchp = w.wchp // the same poll as last time (still in flight since)
		return
	}
	w.lastAt = p.At
	switch {
	case p.Err != nil:
		w.wchp, w.note = nil, ""
	case p.WchpAsked && p.WchpErr == nil:
		w.wchp, w.note = p.Wchp, ""
		w.next = p.At.Add(max(interval, wchpShare*p.WchpTook))
	case p.WchpAsked:
		w.wchp, w.note = nil, "wchp: "+shortErr(p.WchpErr).Error()
		w.next = p.At.Add(max(interval, 10*time.Second))
	default:
		if ok, why := wantWchp(w, need, never, budget, p.At); !ok && why != "" {
			w.wchp, w.note = nil, why
		}
	}
	p.Wchp = w.wchp
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
