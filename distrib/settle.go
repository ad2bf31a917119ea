package distrib

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/scenarios"
)

// settleQueue settles a queue run's items over every process, once all
// have published (loadgen.SettleQueue): lost, duplicated and unconsumed
// items go to res's checks. With a process's ledger missing, its items
// are unaccounted for: lost items are then not checked (duplicates found
// among the others still count).
func (m *Member) settleQueue(ctx context.Context, step int, run scenarios.Run, parts []*Part, res *loadgen.Result) *loadgen.QueueSettlement {
	if !run.Recipe.Spec().Items {
		return nil
	}
	var ledgers []*loadgen.QueueLedger
	for _, p := range parts {
		if p.QueueItems != nil {
			ledgers = append(ledgers, p.QueueItems)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, chroot := m.workConn()
	st, err := loadgen.SettleQueue(ctx, conn, chroot+m.Namespace(step), ledgers)
	if err != nil {
		res.Checks.NotChecked = append(res.Checks.NotChecked, "lost items: "+err.Error())
		return nil
	}
	// The processes' notes that the items are counted here.
	res.Notes = slices.DeleteFunc(res.Notes, func(n string) bool { return strings.HasSuffix(n, loadgen.SharedQueueNote) })
	res.Checks.Unconsumed = st.Unconsumed
	res.Checks.DuplicateItems = st.Duplicates
	if st.Unconsumed > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d item(s) were still queued when every process had stopped (removed)", st.Unconsumed))
	}
	if n := len(ledgers); n < m.plan.Processes {
		res.Checks.NotChecked = append(res.Checks.NotChecked, fmt.Sprintf(
			"lost items: %d of %d processes published their items; the items the others put or took are unaccounted for", n, m.plan.Processes))
		for _, v := range st.Violations {
			if strings.HasPrefix(v, "duplicate") {
				res.Checks.Violations = append(res.Checks.Violations, v)
			}
		}
		return &st
	}
	res.Checks.LostItems = st.Lost
	res.Checks.Violations = append(res.Checks.Violations, st.Violations...)
	return &st
}

// checkHistories checks every process's history as one, when one clock
// orders them: the processes ran on one host and each shipped its
// history. Otherwise the processes' own checks stand (queue and barrier
// runs have none: their items and rounds span the processes), and the
// result says what could not be checked and why. A queue's final read
// (every item still queued or gone once all had stopped) comes from the
// settlement.
func checkHistories(ctx context.Context, processes int, parts []*Part, res *loadgen.Result, settled *loadgen.QueueSettlement) {
	reason := oneClock(processes, parts)
	if reason != "" {
		lin := res.Linearizability
		if lin == nil {
			lin = &oracle.Result{Model: historyModel(parts), Result: oracle.ResultUnknown}
			lin.NotChecked = []string{"every process's history together: " + reason}
			res.Checks = loadgen.WithLinearizability(res.Checks, lin)
		} else {
			lin.NotChecked = append(lin.NotChecked, "across processes: "+reason)
		}
		res.Linearizability = lin
		return
	}
	hs := make([]*oracle.History, 0, len(parts))
	for _, p := range parts {
		h, err := p.History.decode()
		if err != nil {
			lin := &oracle.Result{Model: p.History.Model, Result: oracle.ResultUnknown,
				NotChecked: []string{fmt.Sprintf("every process's history together: process %d's history: %v", p.Process, err)}}
			res.Checks = loadgen.WithLinearizability(res.Checks, lin)
			res.Linearizability = lin
			return
		}
		hs = append(hs, h)
	}
	h := oracle.MergeHistories(hs)
	if settled != nil {
		finalRead(h, parts, settled)
	}
	h.Scope = fmt.Sprintf("every process's operations on one clock (%d processes on %s)", len(parts), parts[0].Host)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	lin := oracle.Check(cctx, h, oracle.Options{})
	// The processes' own verdicts give way to the one over all of them.
	notLin := func(v string) bool { return strings.Contains(v, "linearizability") }
	res.Checks.Violations = slices.DeleteFunc(res.Checks.Violations, notLin)
	res.Checks.Warnings = slices.DeleteFunc(res.Checks.Warnings, notLin)
	res.Checks = loadgen.WithLinearizability(res.Checks, lin)
	res.History, res.Linearizability = h, lin
}

// oneClock says why the parts' histories cannot be checked as one, ""
// when they can.
func oneClock(processes int, parts []*Part) string {
	if len(parts) < processes {
		return fmt.Sprintf("%d of %d processes published their operations", len(parts), processes)
	}
	var hosts []string
	for _, p := range parts {
		if !slices.Contains(hosts, p.Host) {
			hosts = append(hosts, p.Host)
		}
		switch {
		case p.HistoryNote != "":
			return p.HistoryNote
		case p.History == nil:
			return fmt.Sprintf("process %d shipped no history", p.Process)
		}
	}
	if len(hosts) > 1 {
		return fmt.Sprintf("the processes ran on %d hosts (%s), whose clocks do not order each other's operations; each process's history was checked on its own", len(hosts), strings.Join(hosts, ", "))
	}
	return ""
}

func historyModel(parts []*Part) string {
	for _, p := range parts {
		if p.History != nil {
			return p.History.Model
		}
	}
	return ""
}

// finalRead adds the queue's final read to h: every item any process knew
// was still queued when the processes had stopped, or gone; each item the
// foreign client deleted is a delete of its own at an unknown moment of
// the run (as loadgen records it in one process).
func finalRead(h *oracle.History, parts []*Part, st *loadgen.QueueSettlement) {
	part := int32(-1)
	for i, name := range h.Partitions {
		if strings.HasSuffix(name, "/queue") {
			part = int32(i)
		}
	}
	if part < 0 {
		return
	}
	ids := map[int64]bool{}
	var foreign []int64
	for _, p := range parts {
		l := p.QueueItems
		if l == nil {
			continue
		}
		for _, rs := range [][]loadgen.ItemRange{l.Queued, l.Maybe, l.Consumed, l.AckUnknown} {
			loadgen.EachItem(rs, func(id int64) { ids[id] = true })
		}
		loadgen.EachItem(l.ForeignDeleted, func(id int64) { foreign = append(foreign, id) })
	}
	reader := h.Clients()
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		kind := oracle.Gone
		if st.Remaining[id] {
			kind = oracle.Remaining
		}
		h.Add(kind, part, reader, st.Listed, st.Listed, oracle.OK, id)
	}
	for i, id := range foreign {
		h.Add(oracle.ForeignDelete, part, reader+1+int32(i), h.Start, st.Listed, oracle.OK, id)
	}
	h.Sort()
}
