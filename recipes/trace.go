package recipes

import (
	"fmt"
	"time"
)

// Op names a ZooKeeper request a lock makes, for LockTrace.
type Op uint8

const (
	OpCreate      Op = iota // create of the lock node
	OpGetChildren           // list of the lock's directory (with or without a watch)
	OpWatch                 // exists/getData setting a watch (predecessor, own node, herd node)
	OpExists                // exists without a watch (protected-create recovery)
	OpDelete                // delete of the lock node
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpGetChildren:
		return "getChildren"
	case OpWatch:
		return "watch"
	case OpExists:
		return "exists"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// LockTrace receives measurements from a lock. Nil fields are skipped.
type LockTrace struct {
	// Request is called after every ZooKeeper request, with its round trip.
	Request func(op Op, took time.Duration, err error)
	// Waiting is called when an acquisition starts waiting for a watch.
	Waiting func(at time.Time)
	// Woken is called when a watch the lock waits on fires, with the time
	// the client received it (the server's send time is not observable).
	Woken func(at time.Time)
	// Acquired is called when a Lock or TryLock that had to create a node
	// returns (re-entrant calls are not reported).
	Acquired func(AcquireStats)
	// Released is called when an Unlock that deleted the node returns.
	Released func(ReleaseStats)
}

// AcquireStats summarises one acquisition.
type AcquireStats struct {
	Start   time.Time // Lock or TryLock called
	Granted time.Time // the lock was held; zero when it was not
	Node    string    // node created ("" if none)
	Token   uint64    // fencing token when granted
	// HandOff is the fair Lock's hand-off (HandOffUnknown for the
	// other recipes).
	HandOff HandOff
	// Requests counts ZooKeeper requests made; Wakeups the watch
	// notifications this acquisition waited for and received.
	Requests, Wakeups int
	Err               error
}

// ReleaseStats summarises one release.
type ReleaseStats struct {
	Start    time.Time // Unlock started deleting
	Done     time.Time // the deletion was confirmed (or given up)
	Node     string
	Requests int
	Err      error
}

// tracer counts one operation's requests and wake-ups. A nil *tracer is
// valid and counts nothing.
type tracer struct {
	t                 *LockTrace
	requests, wakeups int
}

func (tr *tracer) request(op Op, start time.Time, err error) {
	if tr == nil {
		return
	}
	tr.requests++
	if tr.t != nil && tr.t.Request != nil {
		tr.t.Request(op, time.Since(start), err)
	}
}

func (tr *tracer) waiting() {
	if tr != nil && tr.t != nil && tr.t.Waiting != nil {
		tr.t.Waiting(time.Now())
	}
}

func (tr *tracer) woken(at time.Time) {
	if tr == nil {
		return
	}
	tr.wakeups++
	if tr.t != nil && tr.t.Woken != nil {
		tr.t.Woken(at)
	}
}
