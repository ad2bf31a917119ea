package loadgen

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Fencing is what the guarded resources of a run saw. Each lock (and
// election) of a run guards a resource that remembers the highest fencing
// token that wrote to it and rejects writes with a lower one, as a storage
// service protected by fencing tokens would. Holders write to it when
// granted and when they leave; a holder that ignores Lost() keeps writing
// while it holds. A rejected write means its holder was still working
// after a newer holder had been granted the lock: the two overlapped, and
// fencing caught it.
type Fencing struct {
	// Writes counts writes the resources accepted, Rejected those they
	// refused (stale tokens), WriteErrors those whose outcome is unknown
	// (a shared guarded znode out of reach).
	Writes, Rejected, WriteErrors int64
	// Overlaps lists the holders that overlapped: at most maxOverlaps, in
	// time order; OverlapCount counts them all.
	Overlaps     []Overlap
	OverlapCount int64
	// IgnoreLost is set when holders ignored Lost() (the scenario's
	// ignore_lost): overlaps are then expected, and only an accepted stale
	// write is a violation.
	IgnoreLost bool
}

// Overlap is a holder that kept working after the next one was granted
// the same lock.
type Overlap struct {
	// Lock is the lock's (election's) path.
	Lock string
	// Stale is the older holder, with its token and session; Newer the
	// holder whose grant made it stale.
	StaleToken, NewerToken     uint64
	StaleSession, NewerSession int64
	// At is the stale holder's first rejected write.
	At time.Time
	// Rejected counts the stale holder's writes the resource refused.
	Rejected int64
	// StaleLost says whether the stale holder had been told (its Lost()
	// was closed) when it wrote.
	StaleLost bool
}

// maxOverlaps bounds the overlaps a Fencing lists.
const maxOverlaps = 50

// fence is one lock's guarded resource: an ordered log in the checker
// that accepts a write only with a token at least as high as every token
// it accepted before. With shared set (a run spread over processes), the
// log is a znode all processes write to.
type fence struct {
	path   string
	shared *znodeFence
	errors int64 // writes to the shared znode that failed

	mu       sync.Mutex
	highest  uint64
	session  int64 // the session of the highest token's holder
	writes   int64
	rejected int64
	overlaps map[uint64]*Overlap // by stale token
	order    []uint64            // stale tokens in the order first seen
}

func newFence(path string) *fence { return &fence{path: path, overlaps: make(map[uint64]*Overlap)} }

// write is a holder's write with token; it reports whether the resource
// accepted it. lost says whether the holder had been told its grant ended.
func (f *fence) write(token uint64, session int64, lost bool, at time.Time) bool {
	accepted, highest := true, token
	if f.shared != nil {
		var err error
		accepted, highest, err = f.shared.write(token)
		if err != nil {
			f.mu.Lock()
			f.errors++
			f.mu.Unlock()
			return true // unknown: not counted either way
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shared == nil {
		accepted, highest = token >= f.highest, max(f.highest, token)
	}
	if accepted {
		if token >= f.highest {
			f.highest, f.session = token, session
		}
		f.writes++
		return true
	}
	newerSession := f.session
	if highest != f.highest {
		newerSession = 0 // granted to another process's client
	}
	f.rejected++
	o, ok := f.overlaps[token]
	if !ok {
		o = &Overlap{Lock: f.path, StaleToken: token, StaleSession: session,
			NewerToken: highest, NewerSession: newerSession, At: at}
		f.overlaps[token] = o
		f.order = append(f.order, token)
	}
	o.Rejected++
	o.StaleLost = o.StaleLost || lost
	return false
}

// fencing sums up the fences of a run. Overlaps excuse accepts (another
// client's doing: foreign.go) are left out; excuse may be nil.
func fencing(fences []*fence, ignoreLost bool, excuse func(Overlap) bool) *Fencing {
	out := &Fencing{IgnoreLost: ignoreLost}
	var all []Overlap
	for _, f := range fences {
		f.mu.Lock()
		out.Writes += f.writes
		out.Rejected += f.rejected
		out.WriteErrors += f.errors
		for _, tok := range f.order {
			if o := *f.overlaps[tok]; excuse == nil || !excuse(o) {
				all = append(all, o)
			}
		}
		f.mu.Unlock()
	}
	out.OverlapCount = int64(len(all))
	slices.SortStableFunc(all, func(a, b Overlap) int { return a.At.Compare(b.At) })
	out.Overlaps = all[:min(len(all), maxOverlaps)]
	return out
}

// String describes an overlap in one line.
func (o Overlap) String() string {
	told := "not yet told it had lost the lock"
	if o.StaleLost {
		told = "ignoring Lost()"
	}
	return fmt.Sprintf("%s: holder with token %d (session 0x%x) still writing after token %d (session 0x%x) was granted, %s; %d stale write(s) rejected",
		o.Lock, o.StaleToken, o.StaleSession, o.NewerToken, o.NewerSession, told, o.Rejected)
}
