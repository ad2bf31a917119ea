package oracle

import (
	"fmt"
	"hash/maphash"

	"github.com/anishathalye/porcupine"
)

// input is what porcupine sees of an Op: the models need no output, since
// what the server said (a token, an item) is part of the operation.
type input struct {
	kind   Kind
	client int32
	// rank is a grant's place in its lock's fencing order (ranked
	// models), -1 otherwise.
	rank int64
	// lost marks a release of a grant the holder was told it had lost.
	lost bool
	// unknown marks an operation whose outcome is unknown.
	unknown bool
	// value is what the server said (Op.Value), for the drawing.
	value int64
}

// mayNotHappen makes an operation whose outcome is unknown (Jepsen's
// :info) possibly without effect: where its step is refused, it is taken
// as not having happened. Porcupine gives it no return, so it can always
// be placed after every other operation; taking effect where it can and
// none where it cannot is then the same as Jepsen's "may or may not have
// taken effect" (an ack whose reply was lost before the item was claimed
// again and acknowledged: queue-chaos).
func mayNotHappen(step func(st, in, out any) (bool, any)) func(st, in, out any) (bool, any) {
	return func(st, in, out any) (bool, any) {
		ok, next := step(st, in, out)
		if !ok && in.(input).unknown {
			return true, st
		}
		return ok, next
	}
}

func describe(in any, _ any) string {
	i, ok := in.(input)
	if !ok {
		return "?"
	}
	s := i.kind.String()
	if i.value != NoValue && (i.kind == Acquire || i.kind == ReadAcquire || i.kind == Use) {
		s += fmt.Sprintf(" %d", i.value) // the fencing token, or the node's sequence number
	}
	if i.lost {
		s += " (lost)"
	}
	return s
}

// lockState is a mutex's (or an election's) state: who holds it (-1:
// nobody) and, for ranked models, which grant of the fencing order comes
// next.
type lockState struct {
	holder int32
	next   int64
}

// lockModel is a mutex: at most one holder, released only by its holder,
// and a holder acts on its grant only while it holds it. Ranked, grants
// follow the fencing tokens' order (the server's), so a single order of
// grants is possible and the search stays near-linear.
func lockModel(init lockState, holderName string) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: mayNotHappen(func(st, in, _ any) (bool, any) {
			// Failures return st itself: most steps of a contended lock's
			// search are refused acquisitions, and boxing a new state for
			// each would allocate.
			s, i := st.(lockState), in.(input)
			switch i.kind {
			case Acquire:
				if s.holder != -1 || (s.next >= 0 && i.rank != s.next) {
					return false, st
				}
				n := s.next
				if n >= 0 {
					n++
				}
				return true, lockState{holder: i.client, next: n}
			case Release:
				if s.holder != i.client {
					return false, st
				}
				return true, lockState{holder: -1, next: s.next}
			case Use:
				return s.holder == i.client, st
			}
			return false, st
		}),
		Hash:              func(st any) uint64 { s := st.(lockState); return uint64(s.holder)<<40 ^ uint64(s.next) },
		DescribeOperation: describe,
		DescribeState: func(st any) string {
			s := st.(lockState)
			if s.holder < 0 {
				return "free"
			}
			return fmt.Sprintf("%s: client %d", holderName, s.holder)
		},
	}
}

// rwState is a read/write lock's: its writer (-1: none), its readers
// (a set of clients, comparable as a string of 4-byte ids in order) and,
// ranked, the next grant in node order (-1: unranked).
type rwState struct {
	writer  int32
	readers string
	next    int64
}

// rwModel is a read/write lock: a writer alone, or any readers, each
// released by its own holder. Ranked, grants follow the nodes' sequence
// (the server's order: a reader waits for the writers before it, a writer
// for every node before it).
func rwModel(next int64) porcupine.Model {
	init := rwState{writer: -1, next: next}
	return porcupine.Model{
		Init: func() any { return init },
		Step: mayNotHappen(func(st, in, _ any) (bool, any) {
			s, i := st.(rwState), in.(input)
			n := s.next
			if (i.kind == ReadAcquire || i.kind == Acquire) && n >= 0 {
				if i.rank != n {
					return false, st
				}
				n++
			}
			switch i.kind {
			case ReadAcquire:
				if s.writer != -1 || hasClient(s.readers, i.client) {
					return false, st
				}
				return true, rwState{writer: -1, readers: withClient(s.readers, i.client), next: n}
			case ReadRelease:
				if !hasClient(s.readers, i.client) {
					return false, st
				}
				return true, rwState{writer: s.writer, readers: withoutClient(s.readers, i.client), next: n}
			case Acquire:
				if s.writer != -1 || s.readers != "" {
					return false, st
				}
				return true, rwState{writer: i.client, next: n}
			case Release:
				if s.writer != i.client {
					return false, st
				}
				return true, rwState{writer: -1, next: n}
			case Use:
				return s.writer == i.client || hasClient(s.readers, i.client), st
			}
			return false, st
		}),
		Hash: func(st any) uint64 {
			s := st.(rwState)
			return uint64(s.writer)<<48 ^ uint64(s.next) ^ maphash.String(seed, s.readers)
		},
		DescribeOperation: describe,
		DescribeState: func(st any) string {
			s := st.(rwState)
			if s.writer >= 0 {
				return fmt.Sprintf("writer: client %d", s.writer)
			}
			return fmt.Sprintf("%d reader(s)", len(s.readers)/4)
		},
	}
}

var seed = maphash.MakeSeed()

func clientKey(c int32) string {
	return string([]byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)})
}

func hasClient(set string, c int32) bool {
	k := clientKey(c)
	for i := 0; i+4 <= len(set); i += 4 {
		if set[i:i+4] == k {
			return true
		}
	}
	return false
}

func withClient(set string, c int32) string {
	k := clientKey(c)
	for i := 0; i+4 <= len(set); i += 4 {
		if set[i:i+4] > k {
			return set[:i] + k + set[i:]
		}
	}
	return set + k
}

func withoutClient(set string, c int32) string {
	k := clientKey(c)
	for i := 0; i+4 <= len(set); i += 4 {
		if set[i:i+4] == k {
			return set[:i] + set[i+4:]
		}
	}
	return set
}

// semState is a semaphore's: its holders (a set, as rwState's readers)
// and, ranked, the next grant in lease order (-1: unranked).
type semState struct {
	holders string
	next    int64
}

// semModel is a semaphore of k permits: at most k holders, each released
// by its own holder. Ranked, grants follow the lease nodes' sequence: a
// contender creates its lease while it holds the semaphore's lock, so
// leases are created in the order they are granted.
func semModel(k int, next int64) porcupine.Model {
	init := semState{next: next}
	return porcupine.Model{
		Init: func() any { return init },
		Step: mayNotHappen(func(st, in, _ any) (bool, any) {
			s, i := st.(semState), in.(input)
			switch i.kind {
			case Acquire:
				if (s.next >= 0 && i.rank != s.next) || len(s.holders)/4 >= k || hasClient(s.holders, i.client) {
					return false, st
				}
				n := s.next
				if n >= 0 {
					n++
				}
				return true, semState{holders: withClient(s.holders, i.client), next: n}
			case Release:
				if !hasClient(s.holders, i.client) {
					return false, st
				}
				return true, semState{holders: withoutClient(s.holders, i.client), next: s.next}
			case Use:
				return hasClient(s.holders, i.client), st
			}
			return false, st
		}),
		Hash:              func(st any) uint64 { s := st.(semState); return uint64(s.next) ^ maphash.String(seed, s.holders) },
		DescribeOperation: describe,
		DescribeState: func(st any) string {
			return fmt.Sprintf("%d of %d permits held", len(st.(semState).holders)/4, k)
		},
	}
}

// Item states of the queue model.
const (
	itemAbsent int8 = iota
	itemQueued
	itemConsumed
)

// itemModel is one queue item: enqueued once, claimed only while queued,
// acknowledged (consumed) at most once, and, at the final read, still
// queued exactly when it was never consumed (none lost).
func itemModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return itemAbsent },
		Step: mayNotHappen(func(st, in, _ any) (bool, any) {
			s, i := st.(int8), in.(input)
			switch i.kind {
			case Enqueue:
				return s == itemAbsent, itemQueued
			case Claim, Remaining:
				return s == itemQueued, s
			case Ack, ForeignDelete:
				return s == itemQueued, itemConsumed
			case Gone:
				return s != itemQueued, s
			}
			return false, s
		}),
		Hash:              func(st any) uint64 { return uint64(st.(int8)) },
		DescribeOperation: describe,
		DescribeState: func(st any) string {
			return [...]string{"not queued", "queued", "consumed"}[st.(int8)]
		},
	}
}

// barrierState is one round of a double barrier: who arrived, who left.
type barrierState struct{ arrived, departed int32 }

// barrierModel is one round of a double barrier of n: Enter returns only
// once all n arrived, nobody departs before that, and Leave returns only
// once all n departed.
func barrierModel(n int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return barrierState{} },
		Step: mayNotHappen(func(st, in, _ any) (bool, any) {
			s, i := st.(barrierState), in.(input)
			switch i.kind {
			case Arrive:
				return s.arrived < int32(n), barrierState{s.arrived + 1, s.departed}
			case Entered:
				return s.arrived == int32(n), s
			case Depart:
				return s.arrived == int32(n), barrierState{s.arrived, s.departed + 1}
			case Left:
				return s.departed == int32(n), s
			}
			return false, s
		}),
		Hash:              func(st any) uint64 { s := st.(barrierState); return uint64(s.arrived)<<32 ^ uint64(s.departed) },
		DescribeOperation: describe,
		DescribeState: func(st any) string {
			s := st.(barrierState)
			return fmt.Sprintf("%d of %d arrived, %d left", s.arrived, n, s.departed)
		},
	}
}
