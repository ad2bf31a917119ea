package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// naiveLock is a fair lock with the flaw of the bug 1: a waiter
// is granted once no node before its own is left, without checking that
// its own node is still there, and its Unlock takes a missing node as a
// clean release.
type naiveLock struct {
	conn *zk.Conn
	dir  string
	node string
	seq  int64
	lost chan struct{}
}

func (l *naiveLock) Lock(ctx context.Context) error {
	p, err := l.conn.Create(l.dir+"/lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return err
	}
	l.node, l.seq = p, seqOf(p)
	for {
		names, _, err := l.conn.Children(l.dir)
		if err != nil {
			return err
		}
		prev := ""
		var prevSeq int64 = -1
		for _, n := range names {
			if s := seqOf(l.dir + "/" + n); s < l.seq && s > prevSeq {
				prev, prevSeq = n, s
			}
		}
		if prev == "" {
			return nil
		}
		ok, _, ch, err := l.conn.ExistsW(l.dir + "/" + prev)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			l.conn.Delete(l.node, -1)
			return ctx.Err()
		}
	}
}

func (l *naiveLock) TryLock(context.Context) error { return errors.New("not supported") }
func (l *naiveLock) Unlock(context.Context) error {
	if err := l.conn.Delete(l.node, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}
func (l *naiveLock) Lost() <-chan struct{} { return l.lost }
func (l *naiveLock) FencingToken() uint64  { return uint64(l.seq) + 1 }
func (l *naiveLock) Node() string          { return l.node }

// foreignRun is a short fair-lock run with foreign deletes and writes.
func foreignRun(t *testing.T, clients int) scenarios.Run {
	t.Helper()
	run := shortRun(t, "fair-lock", clients, 4*time.Second)
	run.Hold = scenarios.FixedHold(20 * time.Millisecond)
	run.SessionTimeout = 4 * time.Second
	run.Faults = []scenarios.Fault{
		{Every: 500 * time.Millisecond, Kind: scenarios.ForeignDelete, Rate: 4, Duration: 400 * time.Millisecond},
		{Every: 500 * time.Millisecond, Kind: scenarios.ForeignWrite, Rate: 4, Duration: 400 * time.Millisecond},
	}
	return run
}

// TestForeignDeleteCatchesNaiveLock: a lock that grants a waiter whose
// node another client deleted fails the run, by the foreign-delete check.
func TestForeignDeleteCatchesNaiveLock(t *testing.T) {
	ens := enstest.Start(t, 1)
	res, err := Run(context.Background(), foreignRun(t, 8), Options{
		Servers: ens.Servers(),
		NewLocker: func(s *recipes.Session, path string) recipes.Locker {
			return &naiveLock{conn: s.Conn(), dir: path, lost: make(chan struct{})}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Faults == nil || res.Faults.ForeignDeletes == 0 {
		t.Fatalf("no foreign delete was carried out: %+v", res.Faults)
	}
	if res.Checks.Passed || res.Checks.ForeignGrants == 0 {
		t.Errorf("Passed %v, ForeignGrants %d with a lock that grants deleted waiters; want a failed run", res.Checks.Passed, res.Checks.ForeignGrants)
	}
	found := false
	for _, v := range res.Checks.Violations {
		found = found || strings.HasPrefix(v, "foreign delete:")
	}
	if !found {
		t.Errorf("violations %q lack a foreign delete line", res.Checks.Violations)
	}
	events := 0
	for _, e := range res.Events {
		if e.Kind == EventFault && strings.Contains(e.Detail, "another client deleted") {
			events++
		}
	}
	if events == 0 {
		t.Errorf("no foreign delete on the timeline")
	}
	assertNamespaceGone(t, ens, res.Namespace)
}

// TestForeignDeleteQueueItems: queue items another client deletes are
// counted as such, not as lost.
func TestForeignDeleteQueueItems(t *testing.T) {
	ens := enstest.Start(t, 1)
	run := shortRun(t, "queue", 6, 4*time.Second)
	run.Hold = scenarios.FixedHold(20 * time.Millisecond) // items pile up: some wait long enough to be deleted
	run.SessionTimeout = 4 * time.Second
	run.Faults = []scenarios.Fault{
		{Every: 500 * time.Millisecond, Kind: scenarios.ForeignDelete, Rate: 4, Duration: 400 * time.Millisecond},
		{Every: 500 * time.Millisecond, Kind: scenarios.ForeignWrite, Rate: 4, Duration: 400 * time.Millisecond},
	}
	res, err := Run(context.Background(), run, Options{Servers: ens.Servers()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Faults == nil || res.Faults.ForeignDeletes == 0 {
		t.Fatalf("no foreign delete was carried out: %+v", res.Faults)
	}
	c := res.Checks
	if c.ForeignDeletedItems != int64(res.Faults.ForeignDeletes) {
		t.Errorf("ForeignDeletedItems = %d, want the %d foreign deletes", c.ForeignDeletedItems, res.Faults.ForeignDeletes)
	}
	if c.LostItems != 0 || c.DuplicateItems != 0 {
		t.Errorf("lost %d, duplicated %d items; want 0 (deleted items are not lost): %v", c.LostItems, c.DuplicateItems, c.Violations)
	}
	if l := res.Linearizability; l == nil || l.Result != oracle.ResultOK {
		t.Errorf("linearizability %+v, want ok: deleted items are the other client's doing", l)
	}
	assertHistoryReadable(t, res.History)
	assertNamespaceGone(t, ens, res.Namespace)
}

// TestLagMemberRun: lag-member on a load run's local ensemble, with lost
// replies on the lagging member's connections.
func TestLagMemberRun(t *testing.T) {
	q := faults.NewQuorum(context.Background())
	defer q.Close()
	ens := enstest.StartWith(t, ensemble.Options{Nodes: 3, PeerAddr: q.PeerAddr})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	leader, err := ens.WaitLeader(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	follower := 1 + leader%3
	run := shortRun(t, "fair-lock", 6, 5*time.Second)
	run.Ensemble = 3
	run.SessionTimeout = 4 * time.Second
	run.Faults = []scenarios.Fault{
		{At: 500 * time.Millisecond, Kind: scenarios.LagMember, Member: follower, Delay: 500 * time.Millisecond, Duration: 3 * time.Second},
		{Every: time.Second, Kind: scenarios.CutConnections, On: scenarios.FaultOnMulti, Member: follower},
	}
	res, err := Run(context.Background(), run, Options{Servers: ens.Servers(), Ensemble: ens, Quorum: q})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Faults == nil || res.Faults.Lags != 1 || res.Faults.LagTime < 2*time.Second {
		for _, e := range res.Events {
			t.Logf("event %s %s", e.Kind, e.Detail)
		}
		t.Logf("notes %q", res.Notes)
		t.Fatalf("faults %+v: want one lag of about 3s", res.Faults)
	}
	if st := q.Stats(follower); st.Delayed == 0 {
		t.Errorf("no quorum packet delayed: %+v", st)
	}
	var lagged, back bool
	for _, e := range res.Events {
		lagged = lagged || strings.Contains(e.Detail, "applies its leader's transactions 500ms late")
		back = back || strings.Contains(e.Detail, "applies transactions on time again")
	}
	if !lagged || !back {
		t.Errorf("timeline lacks the lag (%v) or its end (%v)", lagged, back)
	}
	if !res.Checks.Passed {
		t.Errorf("checks failed: %v", res.Checks.Violations)
	}
	assertNamespaceGone(t, ens, res.Namespace)
}

// TestForeignDeleteOfHolder: the other client lists a lock, takes a node
// for a waiter's, and deletes it after it was granted (in the long
// fair-lock-adversary runs, an overlap about once per 3 minutes). The
// holder has lost the lock, and the next waiter is granted while it is
// still inside: that overlap is the other client's doing, as long as the
// recipe tells the holder (Lost() closes or Unlock says ErrLost); when
// the holder is never told, it is a violation. The deleted node's creation
// zxid is the holder's fencing token: the node deleted is the one granted.
func TestForeignDeleteOfHolder(t *testing.T) {
	ens := enstest.Start(t, 1)
	for _, told := range []bool{true, false} {
		name := map[bool]string{true: "holder told", false: "holder not told"}[told]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			open := func() *recipes.Session {
				s, err := recipes.NewSession(ctx, ens.Servers())
				if err != nil {
					t.Fatalf("session: %v", err)
				}
				t.Cleanup(s.Close)
				return s
			}
			sa, sb, fs := open(), open(), open()
			dir := "/foreign-holder-" + strings.ReplaceAll(name, " ", "-")
			r := &runner{}
			r.run.Recipe = scenarios.FairLock
			f := newForeigner(r, fs)
			r.chk.excuse = f.excuse // as the run sets it
			g := &lockGuard{path: dir}

			a := recipes.NewLock(sa, dir)
			if err := a.Lock(ctx); err != nil {
				t.Fatalf("a: Lock: %v", err)
			}
			exitA, doneA := f.grant(a.Node(), a.FencingToken(), time.Now())
			g.enterExclusive(&r.chk, a.FencingToken(), seqOf(a.Node()))

			// The other client deletes a's node, as Act does with a node
			// it listed as a waiter's.
			p := a.Node()
			_, st, err := fs.Conn().Get(p)
			if err != nil {
				t.Fatalf("foreign get: %v", err)
			}
			f.deleteStarted(p)
			err = fs.Conn().Delete(p, st.Version)
			if err != nil {
				t.Fatalf("foreign delete: %v", err)
			}
			if !f.deleteDone(p, st.Czxid, true) {
				t.Errorf("delete of held node %s (czxid %d, holder's token %d) not seen as a holder's", p, st.Czxid, a.FencingToken())
			}

			b := recipes.NewLock(sb, dir)
			if err := b.Lock(ctx); err != nil {
				t.Fatalf("b: Lock: %v", err)
			}
			exitB, doneB := f.grant(b.Node(), b.FencingToken(), time.Now())
			g.enterExclusive(&r.chk, b.FencingToken(), seqOf(b.Node())) // a still inside

			learnt := false
			if told {
				select {
				case <-a.Lost():
				case <-ctx.Done():
					t.Fatal("a: Lost() not closed after its node was deleted")
				}
				learnt = true
			}
			g.exitExclusive()
			exitA()
			if err := a.Unlock(ctx); told && !errors.Is(err, recipes.ErrLost) {
				t.Errorf("a: Unlock = %v, want ErrLost", err)
			}
			doneA(learnt)
			g.exitExclusive()
			exitB()
			if err := b.Unlock(ctx); err != nil {
				t.Errorf("b: Unlock: %v", err)
			}
			doneB(false)

			if got := r.chk.mutex.Load(); got != 0 {
				t.Errorf("mutual-exclusion violations = %d, want 0 (the other client's doing): %v", got, r.chk.violations())
			}
			wantForeign := int64(0)
			if !told {
				wantForeign = 1
			}
			if got := r.chk.foreignGrant.Load(); got != wantForeign {
				t.Errorf("holders never told = %d, want %d: %v", got, wantForeign, r.chk.violations())
			}
			if f.deletedHeld != 1 || f.excused != 1 {
				t.Errorf("deleted holders %d, excused overlaps %d, want 1 and 1", f.deletedHeld, f.excused)
			}
		})
	}
}

// TestForeignDeleteOfHolderFailed: a delete of a holder's node that the
// server refused (the node changed since it was read, or is gone) leaves
// the holder in place: a second holder is then a violation, not the other
// client's doing, and the holder need not be told anything.
func TestForeignDeleteOfHolderFailed(t *testing.T) {
	r := &runner{}
	r.run.Recipe = scenarios.FairLock
	f := newForeigner(r, nil)
	r.chk.excuse = f.excuse
	const dir = "/lock"
	g := &lockGuard{path: dir}
	a, b := dir+"/lock-0000000001", dir+"/lock-0000000002"

	exitA, doneA := f.grant(a, 101, time.Now())
	g.enterExclusive(&r.chk, 101, 1)
	f.deleteStarted(a)
	if f.deleteDone(a, 0, false) {
		t.Error("a refused delete reported as a held node's deletion")
	}
	_, _ = f.grant(b, 102, time.Now())
	g.enterExclusive(&r.chk, 102, 2)
	g.exitExclusive()
	exitA()
	doneA(false)

	if got := r.chk.mutex.Load(); got != 1 {
		t.Errorf("mutual-exclusion violations = %d, want 1 (the delete never happened): %v", got, r.chk.violations())
	}
	if got := r.chk.foreignGrant.Load(); got != 0 {
		t.Errorf("holders never told = %d, want 0 (nothing to tell): %v", got, r.chk.violations())
	}
	if f.excused != 0 || f.deletedHeld != 0 {
		t.Errorf("excused overlaps %d, deleted holders %d, want 0 and 0", f.excused, f.deletedHeld)
	}
}
