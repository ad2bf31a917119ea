package metrics

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Counts are a run's counters, either cumulative or for one interval.
type Counts struct {
	// Ops counts completed operations (acquisitions, enqueues, ...).
	Ops int64
	// Errors counts failed operations; ErrorsByKind splits them by kind.
	Errors       int64
	ErrorsByKind map[string]int64
	// Wakeups counts watch events delivered to clients.
	Wakeups int64
	// ZKRequests counts requests sent to ZooKeeper.
	ZKRequests int64
	// SessionsAlive is a gauge: the sessions alive when the counts were taken.
	SessionsAlive int64
}

// sub returns c - prev for the counters; the gauge keeps c's value.
func (c Counts) sub(prev Counts) Counts {
	d := Counts{
		Ops:           c.Ops - prev.Ops,
		Errors:        c.Errors - prev.Errors,
		Wakeups:       c.Wakeups - prev.Wakeups,
		ZKRequests:    c.ZKRequests - prev.ZKRequests,
		SessionsAlive: c.SessionsAlive,
	}
	for kind, n := range c.ErrorsByKind {
		if n -= prev.ErrorsByKind[kind]; n != 0 {
			if d.ErrorsByKind == nil {
				d.ErrorsByKind = make(map[string]int64)
			}
			d.ErrorsByKind[kind] = n
		}
	}
	return d
}

func (c Counts) clone() Counts {
	c.ErrorsByKind = maps.Clone(c.ErrorsByKind)
	return c
}

// paddedInt64 keeps each hot counter on its own cache line.
type paddedInt64 struct {
	atomic.Int64
	_ [56]byte
}

type counters struct {
	ops, errors, wakeups, zkRequests, sessions paddedInt64
	byKind                                     sync.Map // string -> *atomic.Int64
}

func (c *counters) addError(kind string) {
	c.errors.Add(1)
	v, ok := c.byKind.Load(kind)
	if !ok {
		v, _ = c.byKind.LoadOrStore(kind, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// snapshot reads the counters. It is not atomic as a whole: a counter bumped
// while it runs shows up now or in the next snapshot, never twice or never.
func (c *counters) snapshot() Counts {
	s := Counts{
		Ops:           c.ops.Load(),
		Errors:        c.errors.Load(),
		Wakeups:       c.wakeups.Load(),
		ZKRequests:    c.zkRequests.Load(),
		SessionsAlive: c.sessions.Load(),
	}
	c.byKind.Range(func(k, v any) bool {
		if s.ErrorsByKind == nil {
			s.ErrorsByKind = make(map[string]int64)
		}
		s.ErrorsByKind[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return s
}

// AddOps counts n completed operations.
func (r *Recorder) AddOps(n int64) { r.counters.ops.Add(n) }

// AddError counts one failed operation of the given kind (for example
// "connection_loss", "session_expired", "timeout").
func (r *Recorder) AddError(kind string) { r.counters.addError(kind) }

// AddWakeups counts n watch events delivered to clients.
func (r *Recorder) AddWakeups(n int64) { r.counters.wakeups.Add(n) }

// AddZKRequests counts n requests sent to ZooKeeper.
func (r *Recorder) AddZKRequests(n int64) { r.counters.zkRequests.Add(n) }

// AddSessions moves the sessions-alive gauge by delta: +1 when a session is
// established, -1 when it ends or expires.
func (r *Recorder) AddSessions(delta int64) { r.counters.sessions.Add(delta) }

// Counts returns the cumulative counters so far.
func (r *Recorder) Counts() Counts { return r.counters.snapshot() }
