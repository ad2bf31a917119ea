package inspect

import (
	"slices"
	"time"

	"github.com/zkherd/zkherd/recipes"
)

// Queue rates from what the listings show. The sequence counter cannot
// give them: a directory's sequence numbers count every change of its
// children (creates and deletes, and any helper node a recipe makes), not
// items. Instead two consecutive listings are compared: items listed now
// and not before arrived, items listed before and not now left.
//
// Assumption: an item lives across at least one poll. With a backlog (the
// case that matters) that holds, since consumers take from the head; an
// item enqueued and consumed between two polls of a nearly empty queue is
// not counted, so the rates then read low.

// rateWindow is the span rates are averaged over: one poll's counts jump
// with the moment each listing is taken.
const rateWindow = 5 * time.Second

// flowSample is the cumulative items that arrived and left up to at.
type flowSample struct {
	at       time.Time
	enq, deq int64
}

// seqsOf returns the sequence numbers of nodes, which ParseChildren sorted.
func seqsOf(nodes []recipes.Node) []int64 {
	out := make([]int64, 0, len(nodes))
	for _, n := range nodes {
		if n.Seq >= 0 {
			out = append(out, n.Seq)
		}
	}
	return out
}

// itemFlow counts the items of cur not in prev (arrived) and of prev not in
// cur (left); both are sorted ascending.
func itemFlow(prev, cur []int64) (arrived, left int64) {
	i, j := 0, 0
	for i < len(prev) && j < len(cur) {
		switch {
		case prev[i] == cur[j]:
			i++
			j++
		case prev[i] < cur[j]:
			left++
			i++
		default:
			arrived++
			j++
		}
	}
	return arrived + int64(len(cur)-j), left + int64(len(prev)-i)
}

// flow records a listing of the queue (its item sequences, sorted) at at
// and returns the enqueue and dequeue rates over the last rateWindow.
// The first listing has no rates.
func (rec *queueRec) flow(seqs []int64, at time.Time) (enq, deq float64) {
	last := flowSample{at: at}
	if n := len(rec.samples); n > 0 {
		arrived, left := itemFlow(rec.seqs, seqs)
		last = flowSample{at: at, enq: rec.samples[n-1].enq + arrived, deq: rec.samples[n-1].deq + left}
	}
	rec.seqs = seqs
	rec.samples = append(rec.samples, last)
	// Keep what the window needs: the newest sample at least rateWindow old.
	for len(rec.samples) > 2 && at.Sub(rec.samples[1].at) >= rateWindow {
		rec.samples = slices.Delete(rec.samples, 0, 1)
	}
	first := rec.samples[0]
	if dt := at.Sub(first.at).Seconds(); dt > 0 {
		return float64(last.enq-first.enq) / dt, float64(last.deq-first.deq) / dt
	}
	return 0, 0
}
