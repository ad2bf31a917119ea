package figures

import (
	"maps"
	"sync/atomic"
)

// Totals are a run's raw counts. A count absent is not known (a server
// count when mntr could not be read), which is not the same as 0.
type Totals map[Count]int64

// Clone returns a copy of t.
func (t Totals) Clone() Totals { return maps.Clone(t) }

// MergeTotals combines the totals of several processes of one run, each
// count by its rule. A count unknown in any part is unknown: a sum that
// misses a part, or a maximum that may, is not the run's.
func MergeTotals(parts ...Totals) Totals {
	out := Totals{}
	for _, c := range counts {
		known := len(parts) > 0
		var v int64
		for i, p := range parts {
			n, ok := p[c.Count]
			if !ok {
				known = false
				break
			}
			switch {
			case c.Merge == Max && i > 0:
				v = max(v, n)
			case c.Merge == Max:
				v = n
			default:
				v += n
			}
		}
		if known {
			out[c.Count] = v
		}
	}
	return out
}

// Counter accumulates counts during a run, from many goroutines: the line
// that counts something a figure needs is one Add. The zero value is
// ready to use.
type Counter struct {
	vals [maxCounts]atomic.Int64
}

// maxCounts bounds the list of counts, so that a Counter needs no
// constructor (init checks the list fits).
const maxCounts = 32

func init() {
	if len(counts) > maxCounts {
		panic("figures: more counts than maxCounts; raise it")
	}
}

// Add adds n to c's count.
func (k *Counter) Add(c Count, n int64) {
	if i := indexOf(c); i >= 0 {
		k.vals[i].Add(n)
	}
}

// Get returns c's count so far.
func (k *Counter) Get(c Count) int64 {
	if i := indexOf(c); i >= 0 {
		return k.vals[i].Load()
	}
	return 0
}

// Totals is what the counter holds now: every count but the servers'
// (read from the servers, not counted).
func (k *Counter) Totals() Totals {
	t := make(Totals, len(counts))
	for i, c := range counts {
		if !c.Server {
			t[c.Count] = k.vals[i].Load()
		}
	}
	return t
}

func indexOf(c Count) int {
	for i, s := range counts {
		if s.Count == c {
			return i
		}
	}
	return -1
}
