package inspect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/fourlw"
)

// TestScanCost checks what a snapshot asks of the servers: directories of
// ordinary ephemerals and watched config keys are never listed as lock
// candidates; a lock directory is stat-ed at most once a snapshot (less
// often while it is still: TestStillDirectoryChangeSeen) and listed again
// only when its children changed; config keys many sessions watch are
// herds, listed apart from the locks.
func TestScanCost(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	for _, p := range []string{"/app", "/app/lock", "/reg", "/cfg"} {
		mustCreate(t, admin, p, nil, 0, open)
	}
	// Registrations (ephemerals whose names are no recipe's) and config
	// keys, each watched by three sessions.
	for i := range 20 {
		mustCreate(t, admin, fmt.Sprintf("/reg/member-%d", i), nil, zk.FlagEphemeral, open)
	}
	watchers := []*zk.Conn{connect(t, servers), connect(t, servers), connect(t, servers)}
	for i := range 5 {
		p := fmt.Sprintf("/cfg/key-%d", i)
		mustCreate(t, admin, p, []byte("v"), 0, open)
		for _, w := range watchers {
			if _, _, _, err := w.GetW(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	holder := connect(t, servers)
	mustCreate(t, holder, "/app/lock/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)

	// A walk every 100 snapshots: only the first snapshot walks.
	in := openInspector(t, Options{Servers: servers, RescanEvery: 100})
	in.SetShown(Shown{Watches: true, Sessions: true, Servers: true, Tree: true})
	ctx := context.Background()
	zero := in.Snapshot(ctx) // starts the walk
	in.waitWalk()
	first := in.Snapshot(ctx) // takes in what it found, if zero did not
	if zero.Cost.Walked+first.Cost.Walked == 0 {
		t.Fatalf("the first walk visited no directory: %+v, %+v", zero.Cost, first.Cost)
	}
	second := in.Snapshot(ctx) // the watch lists arrive from here on
	third := in.Snapshot(ctx)
	for _, s := range []*Snapshot{second, third} {
		if s.Cost.Walked != 0 || s.Cost.Lists != 0 || s.Cost.Stats > 1 {
			t.Errorf("unchanged tree: walked %d, lists %d, stats %d; want 0, 0, at most 1 (the lock directory's stat only)",
				s.Cost.Walked, s.Cost.Lists, s.Cost.Stats)
		}
	}
	if len(third.Locks) != 1 || third.Locks[0].Path != "/app/lock" {
		t.Errorf("locks = %v, want /app/lock only", lockPaths(third.Locks))
	}
	if len(third.Herds) != 5 || !strings.HasPrefix(third.Herds[0].Path, "/cfg/key-") {
		t.Errorf("herds = %v, want the 5 watched config keys", lockPaths(third.Herds))
	}
	// A new contender changes the directory's cversion: listed once more,
	// once the directory is read again.
	waiter := connect(t, servers)
	mustCreate(t, waiter, "/app/lock/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	lists := 0
	deadline := time.Now().Add(in.stillCap() + 30*time.Second)
	for {
		s := in.Snapshot(ctx)
		lists += s.Cost.Lists
		if len(s.Locks) == 1 && len(s.Locks[0].Entries) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a new contender: locks %v, never 2 entries", s.Locks)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lists != 1 {
		t.Errorf("after a new contender: %d listings, want 1", lists)
	}
}

// TestStillDirectoryChangeSeen: a lock directory whose children do not
// change is read less and less often, up to StillCap apart (still.go), and
// each snapshot says how old its chain is (ReadAt), never older than the
// cap. Where the assumption fails, a directory still for a while that
// then changes (a holder releasing after minutes), the change is seen at
// the directory's next read, within the cap, and from then on it is read
// every poll while it changes; until that read, the stale chain is shown
// with a ReadAt before the change, not as fresh.
func TestStillDirectoryChangeSeen(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	mustCreate(t, admin, "/app", nil, 0, open)
	mustCreate(t, admin, "/app/lock", nil, 0, open)
	holder := connect(t, servers)
	held := mustCreate(t, holder, "/app/lock/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	waiter := connect(t, servers)
	mustCreate(t, waiter, "/app/lock/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)

	const poll, limit = 200 * time.Millisecond, 1600 * time.Millisecond
	// No walk after the first (RescanEvery): its requests would count.
	in := openInspector(t, Options{Servers: servers, PollInterval: poll, StillCap: limit, NoWatches: true, RescanEvery: 1000})
	ctx := context.Background()
	lock := func(s *Snapshot) *Lock {
		for i := range s.Locks {
			if s.Locks[i].Path == "/app/lock" {
				return &s.Locks[i]
			}
		}
		return nil
	}
	// Still: after a few reads, snapshots that do not read it, each
	// saying how old its chain is, never more than the cap.
	var snaps, reads, skipped int
	for start := time.Now(); time.Since(start) < 4*limit || skipped < 3; {
		if time.Since(start) > time.Minute {
			t.Fatalf("%d snapshots, %d reads: the still directory was never left unread", snaps, reads)
		}
		s := in.Snapshot(ctx)
		l := lock(s)
		if l == nil {
			time.Sleep(poll)
			continue // the walk has not found it yet
		}
		snaps++
		reads += s.Cost.Stats + s.Cost.Lists
		age := l.ReadAge(s.At)
		if age > 0 {
			skipped++
		}
		if age >= limit {
			t.Errorf("snapshot %d shows a chain %v old, want under the cap %v", snaps, age, limit)
		}
		time.Sleep(poll)
	}
	if reads >= snaps {
		t.Errorf("%d reads in %d snapshots of a still directory, want fewer", reads, snaps)
	}
	t.Logf("still: %d reads in %d snapshots, %d of them showing the chain as last read before", reads, snaps, skipped)
	// The holder releases: the directory changes after being still.
	released := time.Now()
	if err := holder.Delete(held, -1); err != nil {
		t.Fatal(err)
	}
	done := time.Now()
	for {
		s := in.Snapshot(ctx)
		l := lock(s)
		if l != nil && len(l.Entries) == 1 {
			if seen := time.Since(released); seen > limit+30*time.Second {
				t.Errorf("the release was seen after %v, want within the cap %v (and the machine's delays)", seen, limit)
			}
			break
		}
		if l != nil && !l.ReadAt.Before(done) {
			t.Fatalf("a chain read at %v, after the release, still shows %d entries", l.ReadAt, len(l.Entries))
		}
		if time.Since(released) > 2*time.Minute {
			t.Fatal("the release was never seen")
		}
		time.Sleep(poll)
	}
	// Changed: read again at the next poll, not a cap later.
	if s := in.Snapshot(ctx); s.Cost.Stats+s.Cost.Lists == 0 {
		t.Errorf("the snapshot after the change did not read the directory: %+v", s.Cost)
	}
}

func lockPaths(ls []Lock) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Path
	}
	return out
}

// TestClosedFourLetterWords runs the inspector against a server that allows
// only srvr, mntr and ruok, as many production ensembles do: waiters are
// not flagged "no watch" (their watches cannot be seen), sessions are
// unknown rather than zero, and the hint names exactly the commands needed.
func TestClosedFourLetterWords(t *testing.T) {
	ens := enstest.Start(t, 1)
	if err := ens.StopMember(1); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(ens.Dir(), "member1", "conf", "zoo.cfg")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^4lw\.commands\.whitelist=.*$`).ReplaceAll(b, []byte("4lw.commands.whitelist=mntr,srvr,ruok"))
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := ens.Restart(rctx, 1); err != nil {
		t.Fatal(err)
	}
	servers := ens.Servers()
	admin := connect(t, servers)
	mustCreate(t, admin, "/app", nil, 0, open)
	mustCreate(t, admin, "/app/lock", nil, 0, open)
	for range 3 {
		c := connect(t, servers)
		mustCreate(t, c, "/app/lock/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	}
	in := openInspector(t, Options{Servers: servers})
	in.SetShown(Shown{Watches: true, Sessions: true, Servers: true, Tree: true})
	ctx := context.Background()
	in.Snapshot(ctx) // starts the walk, the only way to find the lock without dump
	in.waitWalk()
	var snap *Snapshot
	for range 3 {
		snap = in.Snapshot(ctx)
	}
	c := &snap.Cluster
	if !c.SessionsUnknown || !c.WatchesUnknown {
		t.Errorf("sessions unknown %v, watches unknown %v; want both (cons, dump, wchp refused)", c.SessionsUnknown, c.WatchesUnknown)
	}
	if len(snap.Locks) != 1 {
		t.Fatalf("locks = %v, want /app/lock (found by the walk)", lockPaths(snap.Locks))
	}
	l := snap.Locks[0]
	if !l.WatchUnknown || len(l.Anomalies) != 0 {
		t.Errorf("lock: watch unknown %v, anomalies %+v; want unknown and none", l.WatchUnknown, l.Anomalies)
	}
	for _, e := range l.Entries {
		if e.Flags != 0 {
			t.Errorf("entry %s flagged %s without the watch lists", e.Node, e.Flags)
		}
	}
	hint := strings.Join(snap.Notices, "\n")
	if !strings.Contains(hint, "4lw.commands.whitelist=srvr,mntr,cons,dump,wchp") || strings.Contains(hint, "whitelist=*") {
		t.Errorf("notices %q do not name exactly the commands needed", hint)
	}
}

func TestWatchPacing(t *testing.T) {
	now := time.Unix(1000, 0)
	tests := []struct {
		name        string
		w           watchPoll
		need, never bool
		budget      int
		want        bool
		why         string
	}{
		{"needed, under budget", watchPoll{count: 10}, true, false, 100, true, ""},
		{"no view shows watches", watchPoll{count: 10}, false, false, 100, false, "no view shows them"},
		{"watches off", watchPoll{count: 10}, true, true, 100, false, "(no-watches)"},
		{"count unknown", watchPoll{count: -1}, true, false, 100, false, "not known yet"},
		{"over budget", watchPoll{count: 100001}, true, false, 50000, false, "above the budget of 50000"},
		{"no limit", watchPoll{count: 100001}, true, false, -1, true, ""},
		{"period not over", watchPoll{count: 10, next: map[fourlw.Command]time.Time{fourlw.CmdWchp: now.Add(time.Second)}}, true, false, 100, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := wantWchp(&tt.w, tt.need, tt.never, tt.budget, now, nil)
			if got != tt.want || !strings.Contains(why, tt.why) || (tt.why == "" && why != "") {
				t.Errorf("wantWchp = %v, %q; want %v, %q", got, why, tt.want, tt.why)
			}
		})
	}
	// The command names the settings (Options.Name), never this package.
	flag := func(input string) string { return "--" + input }
	for _, tt := range []struct {
		w      watchPoll
		never  bool
		budget int
		want   string
	}{{watchPoll{count: 10}, true, 100, "(--no-watches)"}, {watchPoll{count: 101}, false, 100, "(--watch-budget)"}} {
		if _, why := wantWchp(&tt.w, true, tt.never, tt.budget, now, flag); !strings.HasSuffix(why, tt.want) {
			t.Errorf("wantWchp named by the command: %q, want it to end %q", why, tt.want)
		}
	}
	// The adaptive period: wchp took 5 ms, so not again for 15 s; one that
	// took 100 ms (a busy client machine's measure) not for maxPaced.
	for _, tt := range []struct{ took, want time.Duration }{{5 * time.Millisecond, pacedShare * 5 * time.Millisecond}, {100 * time.Millisecond, maxPaced}} {
		w := watchPoll{count: 10, next: map[fourlw.Command]time.Time{}}
		p := memberPoll{At: now, Took: map[fourlw.Command]time.Duration{fourlw.CmdWchp: tt.took}, Wchp: map[string][]int64{"/a": {1}}}
		updateWatches(&w, &p, time.Second, true, false, 100, nil)
		if got := w.next[fourlw.CmdWchp].Sub(now); got != tt.want {
			t.Errorf("wchp took %v: next after %v, want %v", tt.took, got, tt.want)
		}
	}
	w := watchPoll{count: 10, next: map[fourlw.Command]time.Time{}}
	p := memberPoll{At: now, Took: map[fourlw.Command]time.Duration{fourlw.CmdWchp: 43 * time.Millisecond}, Wchp: map[string][]int64{"/a": {1}}}
	updateWatches(&w, &p, time.Second, true, false, 100, nil)
	later := memberPoll{At: now.Add(time.Second)}
	updateWatches(&w, &later, time.Second, true, false, 100, nil)
	if later.Wchp == nil {
		t.Error("the last watch list is not kept while the period runs")
	}
	// The kept list says when it was taken: nodes listed since are newer
	// than it (judgeWatches).
	if !later.WchpAt.Equal(now) || !mergePolls(later.At, []memberPoll{later}).WatchesAt.Equal(now) {
		t.Errorf("kept watch list taken at %v, cluster's lists at %v; want %v", later.WchpAt, mergePolls(later.At, []memberPoll{later}).WatchesAt, now)
	}
}

func TestBackoff(t *testing.T) {
	b := 1
	for _, busy := range []bool{true, true, true, true, true} {
		b = nextBackoff(b, busy)
	}
	if b != maxBackoff {
		t.Errorf("after 5 busy snapshots backoff = %d, want %d", b, maxBackoff)
	}
	for range 5 {
		b = nextBackoff(b, false)
	}
	if b != 1 {
		t.Errorf("after 5 calm snapshots backoff = %d, want 1", b)
	}
	lowest := map[string]float64{}
	calm := Cluster{Members: []Member{{Addr: "a", Up: true, RecentLatencyAvg: 2}}}
	if r := busyReason(&calm, lowest); r != "" {
		t.Errorf("calm member busy: %s", r)
	}
	for _, m := range []Member{
		{Addr: "a", Up: true, Outstanding: 50, RecentLatencyAvg: 2},
		{Addr: "a", Up: true, RecentLatencyAvg: 40},
	} {
		if r := busyReason(&Cluster{Members: []Member{m}}, lowest); r == "" {
			t.Errorf("member %+v not busy", m)
		}
	}
}

// TestMntrPacing: mntr holds up a big server for milliseconds (9 ms at
// 205,000 znodes), and asked every second it delayed about 1% of another
// client's writes, their whole p99. It is asked every poll where it is
// cheap, at most every pacedShare times its duration where it is not; the
// polls between show its last answer, and its latency is judged busy or
// not only once.
func TestMntrPacing(t *testing.T) {
	now := time.Now()
	if cmds := commandsFor(&watchPoll{}, false, defaultShown, now); !slices.Contains(cmds, fourlw.CmdMntr) || !slices.Contains(cmds, fourlw.CmdSrvr) {
		t.Fatalf("first poll asks %v, want srvr and mntr", cmds)
	}
	for _, tt := range []struct {
		took time.Duration
		next time.Duration
	}{
		{200 * time.Microsecond, time.Second}, // a small server: every poll
		{9 * time.Millisecond, pacedShare * 9 * time.Millisecond},
	} {
		w := watchPoll{count: -1, next: map[fourlw.Command]time.Time{}}
		busyWindow := &windowInfo{RequestsPerSec: 400, LatencyAvg: 40}
		p := memberPoll{At: now, Took: map[fourlw.Command]time.Duration{fourlw.CmdSrvr: time.Millisecond, fourlw.CmdMntr: tt.took},
			Mntr: map[string]string{"zk_watch_count": "7"}, Window: busyWindow}
		updateWatches(&w, &p, time.Second, false, false, 100, nil)
		if got := w.next[fourlw.CmdMntr].Sub(now); got != tt.next {
			t.Errorf("mntr took %v: next after %v, want %v", tt.took, got, tt.next)
		}
		if w.count != 7 {
			t.Errorf("watch count %d, want 7 (from mntr)", w.count)
		}
		for _, at := range []time.Duration{time.Second - time.Millisecond, tt.next - time.Millisecond} {
			if at < time.Second {
				continue
			}
			if cmds := commandsFor(&w, false, defaultShown, now.Add(at)); slices.Contains(cmds, fourlw.CmdMntr) {
				t.Errorf("mntr took %v: asked again after %v", tt.took, at)
			}
		}
		if cmds := commandsFor(&w, false, defaultShown, now.Add(tt.next)); !slices.Contains(cmds, fourlw.CmdMntr) {
			t.Errorf("mntr took %v: not asked after %v", tt.took, tt.next)
		}
		later := memberPoll{At: now.Add(time.Second), Took: map[fourlw.Command]time.Duration{fourlw.CmdSrvr: time.Millisecond}}
		updateWatches(&w, &later, time.Second, false, false, 100, nil)
		if later.Mntr["zk_watch_count"] != "7" || later.Window == nil || later.Window.RequestsPerSec != 400 {
			t.Errorf("a poll without mntr shows mntr %v, window %+v; want the last ones", later.Mntr, later.Window)
		}
		m := memberFrom(later)
		if !m.RatesKnown || m.RequestsPerSec != 400 {
			t.Errorf("a poll without mntr: rates known %v, %v req/s; want the last window's 400", m.RatesKnown, m.RequestsPerSec)
		}
		if first := memberFrom(memberPoll{At: now}); first.RatesKnown {
			t.Error("rates known before any window")
		}
		m.Up = true
		if r := busyReason(&Cluster{Members: []Member{m}}, map[string]float64{m.Addr: 1}); r != "" {
			t.Errorf("the last mntr's latency judged busy again: %s", r)
		}
	}
}

// TestWalkSpreadOnLargeTree: a walk of a large tree is a few thousand
// reads; repeated every 30 snapshots it was most of the inspector's
// requests on a 205,000-znode server. A walk starts only once the last
// one's cost, spread since its start, averages DefaultWalkRate/walkAverageShare units a second:
// with a walk due at every snapshot, a 300-directory tree is walked once
// in these few seconds, not at every snapshot; and the walk itself is
// paced (DefaultWalkRate) from its first unit.
func TestWalkSpreadOnLargeTree(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	open := zk.WorldACL(zk.PermAll)
	mustCreate(t, admin, "/wide", nil, 0, open)
	for i := range 100 {
		mustCreate(t, admin, fmt.Sprintf("/wide/d-%03d", i), nil, 0, open)
	}
	in := openInspector(t, Options{Servers: servers, RescanEvery: 1, ScanRoots: []string{"/wide"}})
	ctx := context.Background()
	walks, units := 0, 0
	start := time.Now()
	var walked time.Duration
	for range 8 {
		s := in.Snapshot(ctx)
		in.waitWalk()
		if s.Cost.Walked > 0 {
			walks++
			units += walkUnits(s.Cost)
		}
		if walks == 0 {
			walked = time.Since(start)
		}
	}
	if walks != 1 {
		t.Errorf("%d walks of %d units in 8 snapshots, want 1 (the next after %d s)", walks, units, units*walkAverageShare/DefaultWalkRate)
	}
	// Paced before each request: up to walkDepth requests wait at once,
	// the last one's names are not waited for.
	if min := time.Duration(units-paceSlack-walkDepth-1) * time.Second / DefaultWalkRate; walked < min {
		t.Errorf("the walk of %d units took %v, want at least %v (%d units/s)", units, walked, min, DefaultWalkRate)
	}
}

// TestChildHerdWithMntrPacedApart: a herd waiting on a child watch of the
// lock directory is seen only by count, mntr's zk_watch_count less the
// watches wchp lists. With mntr paced far apart (its period on a loaded
// machine reached 30 s), a count from before the herd formed less the
// watches listed during it came to about 0, and CI's
// TestInspectUnderChurnInTmux/herd-children saw no herd for its whole run.
// A poll that asks wchp asks mntr too.
func TestChildHerdWithMntrPacedApart(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	admin := connect(t, servers)
	mustCreate(t, admin, "/h", nil, 0, open)
	in := openInspector(t, Options{Servers: servers, RescanEvery: 1})
	in.SetShown(Shown{Watches: true, Sessions: true, Servers: true, Tree: true})
	ctx := context.Background()
	in.Snapshot(ctx) // mntr answered before the herd: a handful of watches
	in.scanMu.Lock()
	in.watches[0].next[fourlw.CmdMntr] = time.Now().Add(time.Hour) // paced far apart
	in.scanMu.Unlock()

	mustCreate(t, admin, "/h/lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open) // the holder
	const waiters = 8
	var herd []*zk.Conn
	for range waiters {
		c := connect(t, servers)
		mustCreate(t, c, "/h/lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
		herd = append(herd, c)
	}
	for _, c := range herd { // the herd: every waiter on the directory (after the creates, which would fire it)
		if _, _, _, err := c.ChildrenW("/h"); err != nil {
			t.Fatal(err)
		}
	}
	// The watch lists are due at every poll from now on: asked after the
	// herd formed. The first answer may still be older than the poll that
	// first lists the waiters (they are then expected, not judged), and on
	// a loaded machine wchp's own pace put the next one past the deadline
	// (1 run in 3 under 8 busy loops): wait for a snapshot that judges
	// them, with mntr still an hour away.
	herdOf := func(l Lock) (n int) {
		for _, e := range l.Entries {
			if e.Role == RoleWaiter && e.Watch == WatchChild && e.Flags.Has(AnomalyHerd) {
				n++
			}
		}
		return n
	}
	var last []Lock
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		in.scanMu.Lock()
		in.watches[0].next[fourlw.CmdWchp] = time.Now()
		in.scanMu.Unlock()
		snap := in.Snapshot(ctx)
		in.waitWalk()
		last = snap.Locks
		if i := slices.IndexFunc(snap.Locks, func(l Lock) bool { return l.Path == "/h" }); i >= 0 && herdOf(snap.Locks[i]) == waiters {
			return
		}
	}
	t.Errorf("no snapshot in 15 s showed the %d waiters in a herd on a child watch; last locks: %+v", waiters, last)
}

// TestStartSpreadsCostlyCommands: a start asked mntr, cons and dump (and
// wchp at the next poll) back to back, before any of their costs was
// known; on the 206,000-znode server each holds it up while it builds its
// reply (issue 26, finding 9). A command never asked is asked one
// a poll: mntr, then cons, dump and wchp; once asked, each follows its own
// period. Until cons and dump were asked the member's sessions are to
// come.
func TestStartSpreadsCostlyCommands(t *testing.T) {
	now := time.Now()
	w := watchPoll{count: -1, next: map[fourlw.Command]time.Time{}}
	took := map[fourlw.Command]time.Duration{
		fourlw.CmdSrvr: time.Millisecond, fourlw.CmdMntr: 100 * time.Microsecond,
		fourlw.CmdCons: 100 * time.Microsecond, fourlw.CmdDump: 100 * time.Microsecond, fourlw.CmdWchp: 100 * time.Microsecond,
	}
	want := [][]fourlw.Command{
		{fourlw.CmdSrvr, fourlw.CmdMntr},
		{fourlw.CmdMntr, fourlw.CmdCons}, // mntr is cheap: every poll; srvr every srvrPeriod
		{fourlw.CmdMntr, fourlw.CmdCons, fourlw.CmdDump},
		{fourlw.CmdMntr, fourlw.CmdCons, fourlw.CmdDump, fourlw.CmdWchp},
	}
	for i, wantCmds := range want {
		at := now.Add(time.Duration(i) * time.Second)
		if got := w.askedAll(); got != (i >= 3) {
			t.Errorf("poll %d: sessions asked for %v, want %v", i+1, got, i >= 3)
		}
		wchp, _ := wantWchp(&w, true, false, 100, at, nil)
		cmds := commandsFor(&w, wchp, defaultShown, at)
		if !slices.Equal(cmds, wantCmds) {
			t.Errorf("poll %d asks %v, want %v", i+1, cmds, wantCmds)
		}
		p := memberPoll{At: at, Took: map[fourlw.Command]time.Duration{}, Mntr: map[string]string{"zk_watch_count": "7"}}
		for _, c := range cmds {
			p.Took[c] = took[c]
		}
		if slices.Contains(cmds, fourlw.CmdWchp) {
			p.Wchp = map[string][]int64{}
		}
		updateWatches(&w, &p, time.Second, true, false, 100, nil)
	}
	if all := commandsFor(nil, true, defaultShown, now); len(all) != 5 {
		t.Errorf("the whitelist line's commands %v, want all five", all)
	}
}

// TestSessionsAsOf: cons is paced by its cost (up to 30 s apart on a busy
// server) and its list reused meanwhile; a snapshot says how old the
// sessions it shows are once that is more than a few polls ("1 session"
// was shown as current beside a run of 200 clients).
func TestSessionsAsOf(t *testing.T) {
	now := time.Now()
	w := watchPoll{count: -1, next: map[fourlw.Command]time.Time{}}
	cons := []consEntry{{Endpoint: "127.0.0.1:5", Session: 7}}
	first := memberPoll{Addr: "m", At: now, Cons: cons,
		Took: map[fourlw.Command]time.Duration{fourlw.CmdSrvr: time.Millisecond, fourlw.CmdCons: 30 * time.Millisecond}}
	updateWatches(&w, &first, time.Second, false, false, 100, nil)
	for _, tt := range []struct {
		after time.Duration
		old   bool
	}{
		{0, false},
		{2 * time.Second, false},
		{20 * time.Second, true},
	} {
		p := memberPoll{Addr: "m", At: now.Add(tt.after), Took: map[fourlw.Command]time.Duration{fourlw.CmdSrvr: time.Millisecond}}
		if tt.after == 0 {
			p = first
		}
		updateWatches(&w, &p, time.Second, false, false, 100, nil)
		snap := Snapshot{At: p.At, Cluster: mergePolls(p.At, []memberPoll{p})}
		at, old := snap.SessionsAsOf()
		if len(snap.Cluster.Sessions) != 1 || !at.Equal(now) || old != tt.old {
			t.Errorf("%v after the list: %d sessions as of %v (old %v), want 1 as of the list (old %v)",
				tt.after, len(snap.Cluster.Sessions), at.Sub(now), old, tt.old)
		}
	}
}

// TestFollowedWhileTreeHidden: the paths the Tree read are re-checked
// every snapshot while it is on screen, and only once every cap while
// another view is (SetTreeShown): a change meanwhile is still reported,
// within the cap, and all are checked at the first snapshot after the
// Tree is shown again.
func TestFollowedWhileTreeHidden(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	mustCreate(t, admin, "/cfg", []byte("v1"), 0, open)
	const limit = 1600 * time.Millisecond
	in := openInspector(t, Options{Servers: ens.Servers(), PollInterval: 200 * time.Millisecond, StillCap: limit, NoWatches: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := in.Node(ctx, "/cfg"); err != nil {
		t.Fatal(err)
	}
	// No lock or queue: every exists a snapshot sends is a followed path's.
	if s := in.Snapshot(ctx); s.Cost.Stats != 1 {
		t.Fatalf("Tree shown: %d exists in a snapshot, want 1 (the node read)", s.Cost.Stats)
	}
	in.SetShown(Shown{Sessions: true, Servers: true})
	hidden := time.Now()
	if s := in.Snapshot(ctx); s.Cost.Stats != 0 && time.Since(hidden) < limit {
		t.Errorf("Tree hidden: %d exists in the next snapshot, want 0 within the cap", s.Cost.Stats)
	}
	if _, err := admin.Set("/cfg", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	for seen := false; !seen; {
		in.Snapshot(ctx)
		select {
		case <-in.Changes():
			for _, c := range in.TakeChanges() {
				seen = seen || (c.Path == "/cfg" && c.Kind&ChangedData != 0)
			}
		case <-time.After(200 * time.Millisecond):
		}
		if ctx.Err() != nil {
			t.Fatal("the change of a followed node was never reported while the Tree was hidden")
		}
	}
	if d := time.Since(changed); d > limit+30*time.Second {
		t.Errorf("the change was reported after %v, want within the cap %v (and the machine's delays)", d, limit)
	}
	in.SetShown(defaultShown)
	if s := in.Snapshot(ctx); s.Cost.Stats != 1 {
		t.Errorf("Tree shown again: %d exists in the next snapshot, want 1", s.Cost.Stats)
	}
}

// TestSrvrPacing: srvr was asked every poll (every second in the
// terminal), and each one made another client's writes in the next few
// milliseconds slow several times as often (docs/BENCHMARKS.md). It is
// asked every srvrPeriod: the polls between show its last answer (mode,
// zxid), a member with nothing due is not polled (its last poll is shown
// again, and not judged busy twice), and a member found down is asked
// again at the next poll.
func TestSrvrPacing(t *testing.T) {
	now := time.Now()
	if cmds := commandsFor(&watchPoll{}, false, defaultShown, now); !slices.Contains(cmds, fourlw.CmdSrvr) {
		t.Fatalf("first poll asks %v, want srvr", cmds)
	}
	for _, tt := range []struct {
		interval, period time.Duration
	}{
		{time.Second, 5 * time.Second},      // the terminal
		{5 * time.Second, 15 * time.Second}, // the headless exporter
	} {
		w := watchPoll{count: -1, next: map[fourlw.Command]time.Time{}}
		first := memberPoll{Addr: "m", At: now, Srvr: &srvrInfo{Mode: "leader", Zxid: 42},
			Took: map[fourlw.Command]time.Duration{fourlw.CmdSrvr: time.Millisecond, fourlw.CmdMntr: 9 * time.Millisecond},
			Mntr: map[string]string{"zk_watch_count": "7", "zk_server_state": "leader"}}
		if !updateWatches(&w, &first, tt.interval, false, false, 100, nil) {
			t.Fatal("the first poll is not new")
		}
		for at := tt.interval; at < tt.period; at += tt.interval {
			if cmds := commandsFor(&w, false, defaultShown, now.Add(at)); slices.Contains(cmds, fourlw.CmdSrvr) {
				t.Errorf("polls %v apart: srvr asked again after %v, want after %v", tt.interval, at, tt.period)
			}
		}
		if cmds := commandsFor(&w, false, defaultShown, now.Add(tt.period)); !slices.Contains(cmds, fourlw.CmdSrvr) {
			t.Errorf("polls %v apart: srvr not asked after %v", tt.interval, tt.period)
		}
		// A poll without srvr (another command due) shows its last answer.
		later := memberPoll{Addr: "m", At: now.Add(tt.interval), Took: map[fourlw.Command]time.Duration{fourlw.CmdCons: time.Millisecond}}
		if !updateWatches(&w, &later, tt.interval, false, false, 100, nil) {
			t.Error("a poll without srvr is not new")
		}
		if m := memberFrom(later); !m.Up || m.Mode != "leader" || m.Zxid != 42 {
			t.Errorf("a poll without srvr: up %v, mode %q, zxid %d; want the last srvr's (leader, 42)", m.Up, m.Mode, m.Zxid)
		}
		// Nothing due: the same poll is shown again, and is not new.
		again := memberPoll{Addr: "m", At: later.At}
		if updateWatches(&w, &again, tt.interval, false, false, 100, nil) {
			t.Error("the same poll shown again counts as new")
		}
		if m := memberFrom(again); m.Mode != "leader" || m.Zxid != 42 {
			t.Errorf("the poll shown again: mode %q, zxid %d; want leader, 42", m.Mode, m.Zxid)
		}
		// Down: asked at the next poll, whatever the period.
		down := memberPoll{Addr: "m", At: now.Add(2 * tt.interval), Err: fmt.Errorf("connection refused")}
		updateWatches(&w, &down, tt.interval, false, false, 100, nil)
		if cmds := commandsFor(&w, false, defaultShown, now.Add(3*tt.interval)); !slices.Contains(cmds, fourlw.CmdSrvr) {
			t.Errorf("polls %v apart: a member found down is not asked srvr at the next poll (%v)", tt.interval, cmds)
		}
	}
}

// TestUnshownAnswersPacedIdle: with the terminal in the Locks view, mntr,
// cons and dump (each about 5 slow writes of another client on the
// benchmark's server, every 30 s) and srvr (every 5 s) were asked for
// answers no view on screen showed. What no view shows is asked at the
// idle pace; a view that shows it asks at its own pace at once.
func TestUnshownAnswersPacedIdle(t *testing.T) {
	now := time.Now()
	w := watchPoll{count: -1}
	took := map[fourlw.Command]time.Duration{fourlw.CmdSrvr: time.Millisecond,
		fourlw.CmdMntr: 9 * time.Millisecond, fourlw.CmdCons: 20 * time.Millisecond, fourlw.CmdDump: 10 * time.Millisecond}
	p := memberPoll{Addr: "m", At: now, Srvr: &srvrInfo{Mode: "leader"}, Took: took,
		Mntr: map[string]string{"zk_watch_count": "7"}, Cons: []consEntry{}, Dump: &dumpInfo{}}
	updateWatches(&w, &p, time.Second, false, false, 100, nil)
	asks := func(shown Shown, after time.Duration, cmd fourlw.Command) bool {
		return slices.Contains(commandsFor(&w, false, shown, now.Add(after)), cmd)
	}
	locks := Shown{Watches: true}
	for _, tt := range []struct {
		cmd        fourlw.Command
		view       Shown // the view that shows it
		shown      time.Duration
		idle       time.Duration
		idleReason string
	}{
		{fourlw.CmdSrvr, Shown{Servers: true}, srvrEvery, srvrIdle, "srvrIdle"},
		{fourlw.CmdMntr, Shown{Servers: true}, pacedShare * 9 * time.Millisecond, idleShare * 9 * time.Millisecond, "idleShare x 9 ms"},
		{fourlw.CmdCons, Shown{Sessions: true}, maxPaced, idlePaced, "idlePaced"},
		{fourlw.CmdDump, Shown{Sessions: true}, maxPaced, idlePaced, "idlePaced"},
	} {
		if asks(locks, tt.shown, tt.cmd) {
			t.Errorf("%s asked after %v with the Locks view on screen, want not before %v (%s)", tt.cmd, tt.shown, tt.idle, tt.idleReason)
		}
		if !asks(tt.view, tt.shown, tt.cmd) {
			t.Errorf("%s not asked after %v with the view that shows it on screen", tt.cmd, tt.shown)
		}
		if asks(locks, tt.idle-time.Millisecond, tt.cmd) || !asks(locks, tt.idle, tt.cmd) {
			t.Errorf("%s with the Locks view: want asked first after %v", tt.cmd, tt.idle)
		}
	}
}

// TestMemberWithNothingDueNotPolled: a member with nothing to ask is not
// polled (no connection, no four-letter word): its last poll stands.
func TestMemberWithNothingDueNotPolled(t *testing.T) {
	ens := enstest.Start(t, 1)
	p := newPoller(ens.Servers(), nil, nil, 10*time.Second)
	defer p.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := p.Poll(ctx, func(int) []fourlw.Command { return []fourlw.Command{fourlw.CmdSrvr} })
	if len(first) != 1 || first[0].Pending || first[0].Err != nil || first[0].Srvr == nil {
		t.Fatalf("first poll %+v, want srvr answered", first)
	}
	asked := false
	second := p.Poll(ctx, func(int) []fourlw.Command { asked = true; return nil })
	if !asked {
		t.Fatal("the commands were not asked for")
	}
	if !second[0].At.Equal(first[0].At) || second[0].Srvr == nil {
		t.Errorf("nothing due: poll at %v (srvr %v), want the first poll's, at %v", second[0].At, second[0].Srvr, first[0].At)
	}
}
