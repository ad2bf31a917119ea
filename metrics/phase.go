package metrics

import "fmt"

// Phase names one measured step of a recipe operation. Its value is used as
// the JSON key in reports, in file names and as the tag of interval log lines,
// so it holds only lower-case letters, digits and underscores.
type Phase string

// The phases zkherd measures.
const (
	// Connect is the time to establish a ZooKeeper session.
	Connect Phase = "connect"
	// Acquire runs from the intended start (open loop) or the call (closed
	// loop) to "held" for locks, semaphores and elections.
	Acquire Phase = "acquire"
	// Create, GetChildren, WatchSet and Delete time the ZooKeeper calls
	// inside an operation; WatchSet is the exists or getData that sets a watch.
	Create      Phase = "create"
	GetChildren Phase = "get_children"
	WatchSet    Phase = "watch_set"
	// NotificationLag runs from the predecessor's deletion to our watch firing.
	NotificationLag Phase = "notification_lag"
	// Handoff runs from one holder's release to the next holder's grant.
	Handoff Phase = "handoff"
	// Hold is the time a lock, permit or leadership is held.
	Hold   Phase = "hold"
	Delete Phase = "delete"
	// Release is the time the release call takes.
	Release Phase = "release"
	// Enqueue and Dequeue time queue calls; QueueWait runs from an item's
	// enqueue to its dequeue and EndToEnd from its production to its
	// consumption being done.
	Enqueue   Phase = "enqueue"
	Dequeue   Phase = "dequeue"
	QueueWait Phase = "queue_wait"
	EndToEnd  Phase = "end_to_end"
	// BarrierWait runs from entering a barrier to leaving it.
	BarrierWait Phase = "barrier_wait"
)

// Phases returns the built-in phases in the order reports list them.
func Phases() []Phase {
	return []Phase{
		Connect, Acquire, Create, GetChildren, WatchSet, NotificationLag, Handoff,
		Hold, Delete, Release, Enqueue, Dequeue, QueueWait, EndToEnd, BarrierWait,
	}
}

// Valid reports whether p can name a phase: 1 to 40 characters from a-z, 0-9
// and '_', starting with a letter.
func (p Phase) Valid() bool {
	if len(p) == 0 || len(p) > 40 || p[0] < 'a' || p[0] > 'z' {
		return false
	}
	for _, c := range []byte(p) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func (p Phase) check() error {
	if !p.Valid() {
		return fmt.Errorf("%w: %q (want a-z, 0-9 and _, starting with a letter)", ErrBadPhase, string(p))
	}
	return nil
}
