package oracle

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zkherd/zkherd/internal/format"
)

// A grant is one acquisition of a lock and what its holder did with it:
// indexes in History.Ops.
type grant struct {
	client int32
	token  int64
	rank   int64
	ops    []int // the acquisition, uses, the release
}

// grantsOf groups a lock partition's operations into grants: an
// acquisition with its holder's uses and release last. ok is false when
// an operation belongs to no grant. Any set of whole grants of a
// linearizable lock history is itself linearizable (a subsequence of
// non-overlapping or at most k overlapping grants is still so), which
// makes grants the unit of windows.
func grantsOf(h *History, p part) (gs []*grant, ok bool) {
	current := map[int32]*grant{}
	release := map[*grant]int{}
	for _, i := range p.ops {
		op := h.Ops[i]
		if skipped(op) {
			continue
		}
		switch op.Kind {
		case Acquire, ReadAcquire:
			g := &grant{client: op.Client, token: op.Value, ops: []int{i}}
			current[op.Client] = g
			gs = append(gs, g)
		case Use, Release, ReadRelease:
			g := current[op.Client]
			if g == nil {
				return nil, false
			}
			if op.Kind == Use {
				g.ops = append(g.ops, i)
			} else if _, dup := release[g]; dup {
				return nil, false
			} else {
				release[g] = i
			}
		default:
			return nil, false
		}
	}
	for _, g := range gs {
		if i, ok := release[g]; ok {
			g.ops = append(g.ops, i) // last: a lost grant's release is called at the grant
		}
	}
	return gs, true
}

// rankGrants orders grants by fencing token, the server's order of
// grants; ok is false when a grant has no token.
func rankGrants(h *History, gs []*grant) bool {
	for _, g := range gs {
		if k := h.Ops[g.ops[0]].Kind; g.token < 0 || (k != Acquire && k != ReadAcquire) {
			return false
		}
	}
	slices.SortStableFunc(gs, func(a, b *grant) int { return cmp.Compare(a.token, b.token) })
	for k, g := range gs {
		g.rank = int64(k)
		if k > 0 && g.token == gs[k-1].token {
			g.rank = gs[k-1].rank // two grants of one token: the model accepts only one
		}
	}
	return true
}

// checkRanked checks a lock whose grants follow its fencing tokens. The
// model then admits one order of grants, so the history is a chain (each
// grant's acquisition, uses, release); its earliest linearization points
// are found in one pass (earliest), and above MaxOps the chain is checked
// in windows of Window grants. A window starts with the previous grant
// still held, its release callable no earlier than that pass found: the
// windows together accept exactly what one search of the whole would.
func checkRanked(ctx context.Context, h *History, p part, gs []*grant, o Options) partResult {
	deadline := time.Now().Add(o.PartitionTimeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	e := earliest(h, gs)
	var pr partResult
	n := 0
	for _, g := range gs {
		n += len(g.ops)
	}
	size := len(gs)
	if n > o.MaxOps {
		size = o.Window
		pr.notes = append(pr.notes, fmt.Sprintf("%s: %s grants checked in windows of %s in fencing order", p.name, format.Count(int64(len(gs))), format.Count(int64(size))))
	}
	model := holderName(h.Model)
	for s := 0; s < len(gs); s += size {
		end := min(s+size, len(gs))
		init := lockState{holder: -1, next: gs[s].rank}
		var ops []porcupine.Operation
		if s > 0 {
			prev := gs[s-1]
			init = lockState{holder: prev.client, next: prev.rank + 1}
			if last := prev.ops[len(prev.ops)-1]; h.Ops[last].Kind == Release {
				op := porcOp(h, last, -1)
				op.Call = min(max(op.Call, e.release[s-1]), op.Return)
				ops = append(ops, op)
			}
		}
		ops = append(ops, flatten(unitsOf(h, gs[s:end], true))...)
		sortOps(ops)
		pr.checked += int64(len(ops))
		m := lockModel(init, model)
		switch runCheck(ctx, m, ops, time.Until(deadline)) {
		case porcupine.Illegal:
			pr.violation = rankedWindow(h, p, gs, e, gs[s:end], o.PartitionTimeout)
			return pr
		case porcupine.Unknown:
			pr.timedOut = true
			return pr
		}
	}
	return pr
}

// chain is the earliest-points pass over a ranked lock: release[k] is the
// earliest moment grant k's release can take effect; failed is the grant
// whose operation could not take effect in its interval (-1 if none), and
// from the grant whose call pushed the points past it.
type chain struct {
	release      []int64
	failed, from int
	// failedOp is the operation of grant failed that could not take
	// effect (an index in History.Ops), failedRet its return.
	failedOp  int
	failedRet int64
}

func earliest(h *History, gs []*grant) chain {
	c := chain{release: make([]int64, len(gs)), failed: -1}
	p, bind := int64(-1<<63), 0
	for k, g := range gs {
		for _, i := range g.ops {
			op := h.Ops[i]
			if op.Call > p {
				p, bind = op.Call, k
			}
			ret := op.Return
			if op.Outcome == Unknown {
				ret = never
			}
			if p > ret && c.failed < 0 {
				c.failed, c.from, c.failedOp, c.failedRet = k, bind, i, ret
			}
		}
		c.release[k] = p
	}
	return c
}

// rankedWindow is the smallest failing window of a ranked lock: the grants
// from the one whose call forced the order to the one that could not
// follow it. Failing that (it should not), the failing window of the
// search.
func rankedWindow(h *History, p part, gs []*grant, e chain, searched []*grant, timeout time.Duration) *found {
	if e.failed >= 0 {
		ops := flatten(unitsOf(h, culprits(h, gs[e.from:e.failed+1], e), true))
		wm := lockModel(lockState{holder: -1, next: gs[e.from].rank}, holderName(h.Model))
		if porcupine.CheckOperationsTimeout(wm, ops, timeout) == porcupine.Illegal {
			detail := fmt.Sprintf("%s: grants in fencing order cannot each end before the next begins: %s", p.name, who(h, gs[e.from:e.failed+1]))
			return window(h, p.name, wm, ops, detail, timeout)
		}
	}
	units := unitsOf(h, searched, true)
	return shrinkUnits(h, p.name, func(first []porcupine.Operation) porcupine.Model {
		return lockModel(lockState{holder: -1, next: first[0].Input.(input).rank}, holderName(h.Model))
	}, units, timeout)
}

// who lists the clients and tokens of grants.
func who(h *History, gs []*grant) string {
	s := ""
	for k, g := range gs {
		if k > 0 {
			s += ", then "
		}
		s += fmt.Sprintf("client %d (token %d)", g.client, g.token)
		for _, i := range g.ops[1:] {
			if op := h.Ops[i]; op.Kind == Use {
				s += " still acting after it was told it lost the lock"
				break
			}
		}
	}
	return s
}

// unitsOf turns grants into porcupine's operations, one slice a grant;
// ranked gives each acquisition its grant's rank.
func unitsOf(h *History, gs []*grant, ranked bool) [][]porcupine.Operation {
	units := make([][]porcupine.Operation, len(gs))
	for k, g := range gs {
		for j, i := range g.ops {
			rank := int64(-1)
			if j == 0 && ranked {
				rank = g.rank
			}
			units[k] = append(units[k], porcOp(h, i, rank))
		}
	}
	return units
}

// flatten joins units in call order.
func flatten(units [][]porcupine.Operation) []porcupine.Operation {
	var ops []porcupine.Operation
	for _, u := range units {
		ops = append(ops, u...)
	}
	sortOps(ops)
	return ops
}

// culprits trims the grants of a failing window to what makes it fail:
// the earlier grants' acquisitions and releases, and of their uses only
// the first one after the failing operation's return; the failing grant
// up to its failing operation.
func culprits(h *History, gs []*grant, e chain) []*grant {
	out := make([]*grant, len(gs))
	found := false
	for k, g := range gs {
		t := *g
		t.ops = nil
		for _, i := range g.ops {
			op := h.Ops[i]
			if k == len(gs)-1 {
				t.ops = append(t.ops, i)
				if i == e.failedOp {
					break
				}
				continue
			}
			if op.Kind == Use && (found || op.Call <= e.failedRet) {
				continue
			}
			found = found || op.Kind == Use
			t.ops = append(t.ops, i)
		}
		out[k] = &t
	}
	return out
}
