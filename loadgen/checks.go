package loadgen

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// maxViolationLines bounds how many violations of one kind are described;
// all of them are counted.
const maxViolationLines = 5

// checker collects the violations of a run. Safe for concurrent use.
type checker struct {
	mutex, fencing, fifo, overIssued, doubleLeader atomic.Int64
	duplicate, lost                                atomic.Int64
	// lostGrants counts grants held across a pause that were lost (the
	// session ended, or the release said so); lostReported those whose
	// release returned ErrLost, lostUnreported the others (pause.go).
	lostGrants, lostReported, lostUnreported atomic.Int64
	maxBypass                                atomic.Int64
	// foreignGrant counts grants to waiters whose node another client had
	// deleted (foreign.go).
	foreignGrant atomic.Int64
	// excuse, set before the clients start when another client deletes
	// nodes, reports whether two holders at once on a lock are that
	// client's doing (foreigner.excuse).
	excuse func(lock string) bool

	mu sync.Mutex
	// skips counts, by check, what a check could not look at (a record
	// it could not write or read), with the first reason: a warning, not
	// a pass.
	skips  map[string]*skipped
	lines  map[string][]string // by kind, at most maxViolationLines each
	order  []string            // kinds in the order first seen
	events []Event             // the described violations, in time
}

func (c *checker) note(kind string, counter *atomic.Int64, format string, args ...any) {
	counter.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lines == nil {
		c.lines = make(map[string][]string)
	}
	if _, ok := c.lines[kind]; !ok {
		c.order = append(c.order, kind)
	}
	if len(c.lines[kind]) < maxViolationLines {
		line := kind + ": " + fmt.Sprintf(format, args...)
		c.lines[kind] = append(c.lines[kind], line)
		c.events = append(c.events, Event{At: time.Now(), Kind: EventViolation, Detail: line})
	}
}

type skipped struct {
	n     int64
	first error
}

// unchecked counts one thing check could not look at.
func (c *checker) unchecked(check string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.skips == nil {
		c.skips = make(map[string]*skipped)
	}
	sk, ok := c.skips[check]
	if !ok {
		sk = &skipped{first: err}
		c.skips[check] = sk
	}
	sk.n++
}

// skippedWarnings says, per check, how much it could not look at.
func (c *checker) skippedWarnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for check, sk := range c.skips {
		out = append(out, fmt.Sprintf("%s: %d not checked (first: %v)", check, sk.n, sk.first))
	}
	slices.Sort(out)
	return out
}

// violationEvents returns the described violations as events.
func (c *checker) violationEvents() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events)
}

// violations returns the described violations, kinds in order of first
// appearance, with a count line where lines were left out.
func (c *checker) violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, k := range c.order {
		out = append(out, c.lines[k]...)
	}
	return out
}

// excused reports whether an overlap on lock is another client's doing.
func (c *checker) excused(lock string) bool { return c.excuse != nil && c.excuse(lock) }

// lockGuard checks one lock path: who is inside, fencing tokens, and the
// order of grants.
type lockGuard struct {
	path string
	fifo bool // check grants against node creation order (fair lock)

	writers, readers atomic.Int32              // holders inside now (exclusive holders count as writers)
	lastRelease      atomic.Pointer[time.Time] // the last release's start, with its monotonic reading

	mu        sync.Mutex
	lastToken uint64
	haveToken bool
	recent    []int64 // sequence numbers of the last grants, for bypass counts
	maxSeq    int64
}

// recentGrants is how many past grants a bypass is counted against.
const recentGrants = 4096

// enterExclusive records a grant of the lock to one holder.
func (g *lockGuard) enterExclusive(c *checker, token uint64, seq int64) {
	if w, r := g.writers.Add(1), g.readers.Load(); (w != 1 || r != 0) && !c.excused(g.path) {
		c.note("mutual exclusion", &c.mutex, "%s granted while %d other holder(s) were inside", g.path, int(w)-1+int(r))
	}
	g.granted(c, token, seq)
}

// enterLeader records a term of leadership.
func (g *lockGuard) enterLeader(c *checker, token uint64, seq int64) {
	if w := g.writers.Add(1); w != 1 && !c.excused(g.path) {
		c.note("single leader", &c.doubleLeader, "%s: %d leaders at once", g.path, w)
	}
	g.granted(c, token, seq)
}

// enterShared records a grant of a read lock.
func (g *lockGuard) enterShared(c *checker) {
	g.readers.Add(1)
	if w := g.writers.Load(); w != 0 && !c.excused(g.path) {
		c.note("mutual exclusion", &c.mutex, "%s read lock granted while a writer was inside", g.path)
	}
}

// enterWriter records a grant of a write lock (exclusive against readers
// too); it has no fencing token check.
func (g *lockGuard) enterWriter(c *checker) {
	if w, r := g.writers.Add(1), g.readers.Load(); (w != 1 || r != 0) && !c.excused(g.path) {
		c.note("mutual exclusion", &c.mutex, "%s write lock granted while %d writer(s) and %d reader(s) were inside", g.path, w-1, r)
	}
}

func (g *lockGuard) exitExclusive() { g.writers.Add(-1) }
func (g *lockGuard) exitShared()    { g.readers.Add(-1) }

// released notes when a release started, for handoff gaps.
func (g *lockGuard) released(at time.Time) { g.lastRelease.Store(&at) }

// handoff returns the gap from the last release to a grant at granted, for
// a waiter that started waiting at start (before that release). A release
// that started after the grant did not cause it: with a semaphore's
// several leases, another holder may release between a grant and this
// call, which used to record a negative gap.
func (g *lockGuard) handoff(start, granted time.Time) (time.Duration, bool) {
	rel := g.lastRelease.Load()
	if rel == nil || rel.Before(start) || rel.After(granted) {
		return 0, false
	}
	return granted.Sub(*rel), true
}

func (g *lockGuard) granted(c *checker, token uint64, seq int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.haveToken && token <= g.lastToken && !c.excused(g.path) {
		c.note("fencing", &c.fencing, "%s token %d granted after token %d", g.path, token, g.lastToken)
	}
	if token > g.lastToken || !g.haveToken {
		g.lastToken = token
	}
	g.haveToken = true
	if !g.fifo || seq < 0 {
		return
	}
	if seq < g.maxSeq {
		var overtaken int64
		for _, s := range g.recent {
			if s > seq {
				overtaken++
			}
		}
		c.note("fifo", &c.fifo, "%s granted node %010d after %d later node(s)", g.path, seq, overtaken)
		for {
			m := c.maxBypass.Load()
			if overtaken <= m || c.maxBypass.CompareAndSwap(m, overtaken) {
				break
			}
		}
	}
	g.maxSeq = max(g.maxSeq, seq)
	if len(g.recent) == recentGrants {
		g.recent = slices.Delete(g.recent, 0, recentGrants/2)
	}
	g.recent = append(g.recent, seq)
}

// limitGuard checks that at most limit holders are inside at once
// (semaphore leases, leaders).
type limitGuard struct {
	what    string
	limit   int32
	inside  atomic.Int32
	counter func(*checker) *atomic.Int64
	kind    string
}

func (g *limitGuard) enter(c *checker) {
	if n := g.inside.Add(1); n > g.limit {
		c.note(g.kind, g.counter(c), "%s: %d holders at once, limit %d", g.what, n, g.limit)
	}
}

func (g *limitGuard) exit() { g.inside.Add(-1) }
