package inspect

import (
	"fmt"
	"slices"
	"time"

	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/exit"
)

// What the inspector asks of the servers, and how it keeps that bounded on
// a production ensemble. Figures measured on ZooKeeper 3.8 with 206,000
// znodes, 2,000 sessions and 100,000 watches (docs/BENCHMARKS.md):
//   - a four-letter word holds up the server while it builds its reply,
//     and writes that arrive meanwhile wait: mntr took 7-9 ms there, dump
//     10 ms, cons 20 ms, wchp ~43 ms (2.7 MB). Asked every second, mntr
//     alone delayed about 1% of a steady writer's requests, which is what
//     its p99 is made of: the p99 rose by 40-50%. So mntr, cons, dump and
//     wchp are each asked at most every pacedShare times their last
//     duration (mntr every ~27 s there, every poll or two on a small server
//     where it takes under a millisecond), and together they delay about a
//     thousandth of other clients' requests. At 1,000 times (each alone a
//     thousandth) the headless exporter asked mntr, cons and dump every
//     10 s each on the benchmark's tree, and the slowest 1% of another
//     client's writes fell twice as often in a second holding one of them
//     as in the others (docs/BENCHMARKS.md, 2026-11-26 afternoon): with the
//     inspector's requests down to 6 a second, they were the largest part
//     of its cost to that client's p99.
//   - srvr, small and constant (about 1 ms there), is asked every
//     srvrPolls poll intervals and at least srvrEvery apart, not every
//     poll (srvrPeriod).
//   - wchp is asked only while a view shows watches (Shown.Watches),
//     never on a member holding more watches than the budget.
//   - what no view shows is asked less often (Shown): cons and dump
//     while the Sessions view is not on screen, srvr and mntr while the
//     Servers view is not (idleShare, idlePaced, srvrIdle).
//   - all are asked once per snapshot at most, not on a clock of their
//     own: a snapshot that takes longer paces them too.
//   - the poll interval doubles (up to maxBackoff times) while a member
//     has more than busyOutstanding requests queued or its recent latency
//     is well above the lowest seen, and comes back once it is not.
const (
	// DefaultWatchBudget is the most watches (mntr zk_watch_count) a member
	// may hold for the inspector to ask it wchp.
	DefaultWatchBudget = 50000
	// pacedShare: mntr, cons, dump and wchp, whose cost grows with the
	// znodes, sessions, ephemerals and watches, are asked at most every
	// pacedShare times their last duration (cons taking 10 ms: every 30 s),
	// so that each holds up a member under ~0.03% of the time, the three
	// or four together ~0.1%. The price: sessions (cons), ephemerals (dump)
	// and the server figures (mntr) of a large server are up to maxPaced
	// old; the views say how old the sessions are (SessionsAsOf).
	pacedShare = 3000
	// maxPaced bounds that period: a duration measured by the client
	// includes its own machine's load (a reply that took 100 ms on a busy
	// laptop would leave the sessions list 100 s old), and on the large
	// server above every command but wchp stays under it anyway.
	maxPaced = 30 * time.Second
	// idleShare and idlePaced pace cons and dump while no view shows the
	// sessions, and mntr while no view shows the members' figures
	// (Shown): at idleShare times their last duration, at most idlePaced
	// apart (cons taking 10 ms: every 2 minutes). On the quiet benchmark
	// server each of mntr, cons and dump made about 5 of another client's
	// writes slow, asked every 30 s: with the terminal in the Locks view,
	// about 30 of the 600 writes a minute its p99 rests on, for answers
	// that view does not show (docs/BENCHMARKS.md, issues 24 and 26).
	// The price, while those views are not on screen: a new session's
	// client address (shown beside a lock's holder and waiters) and its
	// ephemerals come up to 2 minutes late, the status line's session
	// count says how old it is (SessionsAsOf), and a holder whose node is
	// newer than the sessions list is not judged gone (flagHolders).
	// Switching to the view puts them back on its pace: asked once its
	// period since the last answer has passed (at once if it has).
	idleShare = 4 * pacedShare
	idlePaced = 2 * time.Minute
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

// Pacing srvr (issues 24 and 26, the production cost budget). srvr was
// asked every poll, every second in the terminal: each one a TCP
// connection the server accepts, answers and closes, a log line, and a
// wake-up of the inspector, on the same cores as another client's writes.
// Measured on BenchmarkInspectorCost's server (docs/BENCHMARKS.md, "What
// still costs the tail", 1,000 setData a second, on a loaded machine),
// writes that started in the 10 ms after a srvr were among the slowest 1%
// 3-14 times as often as the others; asked 60 times a minute, srvr had
// more of the slowest writes after it than mntr, cons and dump together
// (2-3 a minute each).
//
// What srvr alone tells: whether a member answers, its mode, zxid and
// latency since its start. Its outstanding requests, connections and
// znodes are shown from mntr when it has answered (merge.go), so the
// back-off read them from mntr already.
//
// Assumption: a member's mode and zxid matter at the pace a person reads
// the Servers view, and a member that stops answering can be reported a
// few seconds late: srvr is asked every srvrPolls poll intervals, at least
// srvrEvery apart (every 5 s in the terminal, every 15 s for the headless
// exporter's 5 s polls, which Prometheus scrapes every 15 s or more); the
// polls between show its last answer. A member with nothing due is not
// polled at all.
//
// Where it fails: a member that dies is shown up until its next srvr (or
// another command due before it), up to srvrPeriod late; a leader change
// likewise (TestSrvrPacing; TestMemberKilled still sees a killed member
// go down). A member found down is asked again at every poll.
//
// While the Servers view is not on screen (Shown.Servers), srvr is asked
// every srvrIdle: the header's "members up" and the Locks view's notices
// say a member died up to 15 s late, as the headless exporter does.
const (
	srvrEvery = 5 * time.Second
	srvrIdle  = 15 * time.Second
	srvrPolls = 3
)

// srvrPeriod is how long srvr's answer is used before it is asked again,
// while the Servers view shows it (shown) or not.
func srvrPeriod(interval time.Duration, shown bool) time.Duration {
	if !shown {
		return max(srvrIdle, srvrPolls*interval)
	}
	return max(srvrEvery, srvrPolls*interval)
}

// watchPoll is what the inspector remembers of one member's costly
// answers (mntr, cons, dump, wchp): the last of each, reused until its
// adaptive period allows asking again.
type watchPoll struct {
	wchp   map[string][]int64 // last watch list; nil when none is usable
	wchpAt time.Time          // when wchp was taken
	srvr   *srvrInfo          // last srvr answer, reused until srvrPeriod passes
	srvrAt time.Time          // when srvr was taken
	mntr   map[string]string
	mntrAt time.Time   // when mntr was taken
	window *windowInfo // between the last two mntr replies
	cons   []consEntry
	consAt time.Time // when cons was taken
	dump   *dumpInfo
	next   map[fourlw.Command]time.Time // not asked again before, while a view shows its answer
	idle   map[fourlw.Command]time.Time // not asked again before, while none does
	count  int64                        // mntr zk_watch_count, -1 unknown
	lastAt time.Time                    // the poll the state was last updated from
	note   string                       // why the watch list is unknown
}

// due reports whether cmd's adaptive period has passed: the one while a
// view shows its answer (shown), or the idle one.
func (w *watchPoll) due(cmd fourlw.Command, now time.Time, shown bool) bool {
	if !shown {
		return !now.Before(w.idle[cmd])
	}
	return !now.Before(w.next[cmd])
}

// shows reports whether a view on screen shows cmd's answer: srvr and
// mntr the Servers view, cons and dump the Sessions view; wchp has its
// own need (wantWchp).
func (s Shown) shows(cmd fourlw.Command) bool {
	switch cmd {
	case fourlw.CmdSrvr, fourlw.CmdMntr:
		return s.Servers
	case fourlw.CmdCons, fourlw.CmdDump:
		return s.Sessions
	}
	return true
}

// wantWchp decides whether member w is asked wchp in the next poll.
// The reason names the inputs as name does (exit.Advice).
func wantWchp(w *watchPoll, need, never bool, budget int, now time.Time, name func(string) string) (bool, string) {
	switch {
	case never:
		return false, exit.Advice(name, "watches not polled ({no-watches})")
	case !need:
		return false, "watches not polled: no view shows them"
	case w.count < 0:
		return false, "watch count not known yet"
	case budget >= 0 && w.count > int64(budget):
		return false, exit.Advice(name, "watches not listed: %d watches, above the budget of %d ({watch-budget})", w.count, budget)
	case !w.due(fourlw.CmdWchp, now, true):
		return false, ""
	}
	return true, ""
}

// commandsFor lists what a member is asked in the next poll: srvr when
// its period has passed (srvrPeriod; at once on a member never asked or
// found down), mntr, cons and dump when their period has passed (the
// shown or the idle one, as shown says), wchp when wantWchp says so, and
// mntr with every wchp. Nothing at all: the member is not polled.
//
// A costly command never asked yet has no period: its cost is not known.
// At most one such is asked a poll, in the order mntr (the watch count
// wchp's budget needs), cons, dump, wchp: a start asked mntr, cons and
// dump in its first poll and wchp in its second, back to back, and on the
// 206,000-znode server each holds it up while it builds its reply (7-9,
// 20, 10 and 43 ms; issue 26, finding 9). The first snapshots
// show the sessions and watches still to come as pending
// (watchPoll.askedAll).
//
// mntr goes with wchp because the child watches a herd waits on are
// counted, not listed: they are mntr's zk_watch_count less the watches
// wchp lists (Cluster.ChildWatches), and the two must be of the same
// moment. With mntr paced apart (30 s on CI's loaded machine), a member's
// count from before a herd-children run less the watches listed during it
// came to about 0, and the herd was not shown for the run's first minute.
// mntr costs a fraction of wchp (7-9 ms against ~43 ms on the 206,000-znode
// server), so wchp's pacing bounds both.
func commandsFor(w *watchPoll, wchp bool, shown Shown, now time.Time) []fourlw.Command {
	var cmds []fourlw.Command
	if w == nil || !w.asked(fourlw.CmdSrvr) || w.due(fourlw.CmdSrvr, now, shown.shows(fourlw.CmdSrvr)) {
		cmds = append(cmds, fourlw.CmdSrvr)
	}
	firstTime := false // a command never asked is in this poll
	for _, c := range []fourlw.Command{fourlw.CmdMntr, fourlw.CmdCons, fourlw.CmdDump, fourlw.CmdWchp} {
		want := c != fourlw.CmdWchp || wchp
		switch {
		case w == nil:
		case !w.asked(c):
			want = want && !firstTime
			firstTime = firstTime || want
		default:
			want = want && (c == fourlw.CmdWchp || w.due(c, now, shown.shows(c)) || (c == fourlw.CmdMntr && wchp))
		}
		if want {
			cmds = append(cmds, c)
		}
	}
	if i := slices.Index(cmds, fourlw.CmdWchp); i >= 0 && !slices.Contains(cmds, fourlw.CmdMntr) {
		cmds = slices.Insert(cmds, i, fourlw.CmdMntr) // its count goes with the list
	}
	return cmds
}

// asked reports whether cmd was asked of the member (its period known).
func (w *watchPoll) asked(cmd fourlw.Command) bool {
	_, ok := w.next[cmd]
	return ok
}

// askedAll reports whether the member was asked cons and dump at least
// once since it was last down: until then its sessions and ephemerals are
// still to come.
func (w *watchPoll) askedAll() bool {
	return w.asked(fourlw.CmdCons) && w.asked(fourlw.CmdDump)
}

// updateWatches folds one member's poll into w and fills p's srvr, mntr,
// cons, dump and watch list with what to use: this poll's answers, the
// previous ones while their adaptive period keeps them from being asked
// again, or nil (unknown). It reports whether p is a new poll (not the one
// folded in before, shown again while the member is not polled or its
// poll is in flight).
func updateWatches(w *watchPoll, p *memberPoll, interval time.Duration, need, never bool, budget int, name func(string) string) bool {
	if w.next == nil {
		w.next = map[fourlw.Command]time.Time{}
	}
	if w.idle == nil {
		w.idle = map[fourlw.Command]time.Time{}
	}
	if p.Pending {
		return false // nothing answered yet: nothing to fold in
	}
	if p.Err != nil {
		fresh := !p.At.Equal(w.lastAt)
		w.srvr, w.wchp, w.mntr, w.window, w.cons, w.dump, w.note, w.consAt = nil, nil, nil, nil, nil, nil, "", time.Time{}
		w.srvrAt, w.mntrAt = time.Time{}, time.Time{}
		w.lastAt = p.At
		clear(w.next)
		clear(w.idle)
		return fresh
	}
	if p.At.Equal(w.lastAt) {
		// The same poll as last time (the member's next one is in flight,
		// or nothing was due).
		p.Srvr, p.Wchp, p.WchpAt, p.Mntr, p.Window, p.Cons, p.Dump = w.srvr, w.wchp, w.wchpAt, w.mntr, reused(w.window), w.cons, w.dump
		p.ConsAt, p.SrvrAt, p.MntrAt = w.consAt, w.srvrAt, w.mntrAt
		return false
	}
	w.lastAt = p.At
	if _, asked := p.Took[fourlw.CmdSrvr]; asked {
		w.srvr, w.srvrAt = p.Srvr, p.At
		w.next[fourlw.CmdSrvr], w.idle[fourlw.CmdSrvr] = p.At.Add(srvrPeriod(interval, true)), p.At.Add(srvrPeriod(interval, false))
	}
	period := func(took time.Duration) time.Time { return p.At.Add(max(interval, min(pacedShare*took, maxPaced))) }
	paced := func(cmd fourlw.Command, took time.Duration) {
		w.next[cmd] = period(took)
		w.idle[cmd] = p.At.Add(max(interval, min(idleShare*took, idlePaced)))
	}
	mntrTook, mntrAsked := p.Took[fourlw.CmdMntr]
	if mntrAsked {
		w.mntr, w.window, w.mntrAt = p.Mntr, p.Window, p.At
		paced(fourlw.CmdMntr, mntrTook)
		if v, ok := intKey(p.Mntr, "zk_watch_count"); ok {
			w.count = v
		}
	}
	if took, asked := p.Took[fourlw.CmdCons]; asked {
		w.cons, w.consAt = p.Cons, p.At
		paced(fourlw.CmdCons, took)
	}
	if took, asked := p.Took[fourlw.CmdDump]; asked {
		w.dump = p.Dump
		paced(fourlw.CmdDump, took)
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
		if ok, why := wantWchp(w, need, never, budget, p.At, name); !ok && why != "" {
			w.wchp, w.note = nil, why
		}
	}
	p.Srvr, p.Wchp, p.WchpAt, p.Mntr, p.Cons, p.Dump, p.ConsAt = w.srvr, w.wchp, w.wchpAt, w.mntr, w.cons, w.dump, w.consAt
	p.SrvrAt, p.MntrAt = w.srvrAt, w.mntrAt
	if !mntrAsked {
		p.Window = reused(w.window)
	}
	return true
}

// reused is a window shown again by a poll that did not ask mntr: its
// rates still describe the member, but its latency was already judged by
// busyReason, once, and must not stretch the poll interval again.
func reused(w *windowInfo) *windowInfo {
	if w == nil {
		return nil
	}
	r := *w
	r.LatencyAvg = 0
	return &r
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
