package report

import (
	"slices"
	"time"

	"github.com/zkherd/zkherd/loadgen"
)

// WaitGraph is who waited on whom at a lock scenario's first lock at the
// window's busiest moment (loadgen.WaitGraph, times in milliseconds and
// seconds since the scenario started).
type WaitGraph struct {
	// T is when the graph was taken.
	T float64 `json:"t_s"`
	// Path is the lock's directory; Locks how many locks the run had.
	Path  string `json:"path"`
	Locks int    `json:"locks"`
	// Holders hold the lock (one, unless a check failed); Waiters are the
	// first waiters in queue order, WaitersTotal counts them all.
	Holders      []Contender `json:"holders"`
	Waiters      []Contender `json:"waiters"`
	WaitersTotal int         `json:"waiters_total"`
	// Fan counts waiters by the path they watch, most watched first.
	Fan []loadgen.WatchCount `json:"fan,omitempty"`
	// WokePerRelease is waiters woken per release in the interval,
	// Releases the releases in it.
	WokePerRelease float64 `json:"woke_per_release"`
	Releases       int64   `json:"releases"`
	// Herd says the graph is a herd (a fan), not a chain.
	Herd bool `json:"herd"`
}

// Contender is one client of the lock.
type Contender struct {
	Client int `json:"client"`
	// Node is its node ("" before its create returned, and for a herd
	// lock's waiters); Watching the path its watch is on, with a trailing
	// "/" for a child watch.
	Node     string `json:"node,omitempty"`
	Watching string `json:"watching,omitempty"`
	// ForMs is how long it had held or waited, WatchForMs how long its
	// watch had been set.
	ForMs      float64 `json:"for_ms"`
	WatchForMs float64 `json:"watch_for_ms,omitempty"`
}

// newWaitGraph converts g, with times since start; nil for nil.
func newWaitGraph(g *loadgen.WaitGraph, start time.Time) *WaitGraph {
	if g == nil {
		return nil
	}
	out := &WaitGraph{
		Path: g.Path, Locks: g.Locks, WaitersTotal: g.WaitersTotal,
		WokePerRelease: round3(g.WokePerRelease), Releases: g.Releases, Herd: g.IsHerd(),
		Holders: contenders(g.Holders), Waiters: contenders(g.Waiters),
	}
	if !start.IsZero() {
		out.T = round3(g.At.Sub(start).Seconds())
	}
	out.Fan = slices.Clone(g.Fan)
	return out
}

func contenders(cs []loadgen.Contender) []Contender {
	out := make([]Contender, 0, len(cs))
	for _, c := range cs {
		out = append(out, Contender{Client: c.Client, Node: c.Node, Watching: c.Watching, ForMs: ms(c.For), WatchForMs: ms(c.WatchFor)})
	}
	return out
}

// ShortPath names p relative to the lock's directory (loadgen's rule).
func (g *WaitGraph) ShortPath(p string) string {
	return (&loadgen.WaitGraph{Path: g.Path}).ShortPath(p)
}
