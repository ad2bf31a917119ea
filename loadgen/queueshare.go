package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// A queue run spread over processes shares one queue: an item one process
// puts, another's consumer may take. No process can then count its items
// lost or duplicated alone, nor remove what is left while the others
// work. Each process instead publishes its QueueLedger (the items it put,
// the items its consumers acknowledged), and the process that merges the
// run settles them once every process has stopped (SettleQueue): it
// lists what is still queued, removes it, and counts the items lost (put,
// confirmed, neither consumed nor still there) and duplicated
// (acknowledged twice, by one process or two). Item ids are unique across
// the processes: process p numbers its items from p<<itemIDBits.

// SharedQueueNote is the note of a process's own result in a queue run
// spread over processes: its lost and duplicated items are not its own
// to count. The merged result drops it.
const SharedQueueNote = "lost and duplicated items are counted over every process by the process that merges the run"

// itemIDBits leaves room for 2^40 items per process.
const itemIDBits = 40

// ItemRange is a run of consecutive item ids, From to To inclusive.
type ItemRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// QueueLedger is one process's item accounting in a queue run spread over
// processes. Ids are kept as ranges: producers number their items in
// order, and consumers take them roughly in that order, so a ledger of
// thousands of items is a few ranges.
type QueueLedger struct {
	// Queued are the items this process put and the servers confirmed;
	// Maybe those whose put's outcome is unknown (they may be queued).
	Queued []ItemRange `json:"queued,omitempty"`
	Maybe  []ItemRange `json:"maybe,omitempty"`
	// Consumed are the items this process's consumers acknowledged;
	// AckUnknown those whose acknowledgement's outcome is unknown (gone at
	// the end: consumed; still there: unconsumed).
	Consumed   []ItemRange `json:"consumed,omitempty"`
	AckUnknown []ItemRange `json:"ack_unknown,omitempty"`
	// Duplicates counts items this process's consumers acknowledged
	// twice.
	Duplicates int64 `json:"duplicates,omitempty"`
	// ForeignDeleted are the items the scenario's foreign client deleted
	// (the starter's; foreign-delete).
	ForeignDeleted []ItemRange `json:"foreign_deleted,omitempty"`
}

// rangesOf turns ids into sorted ranges.
func rangesOf(ids []int64) []ItemRange {
	slices.Sort(ids)
	var out []ItemRange
	for _, id := range ids {
		if n := len(out); n > 0 && out[n-1].To+1 >= id {
			out[n-1].To = max(out[n-1].To, id)
			continue
		}
		out = append(out, ItemRange{From: id, To: id})
	}
	return out
}

// EachItem calls f for every id of rs.
func EachItem(rs []ItemRange, f func(int64)) {
	for _, r := range rs {
		for id := r.From; id <= r.To; id++ {
			f(id)
		}
	}
}

// ledger is the process's QueueLedger, once its clients have stopped.
// Called with w.mu held.
func (w *queueWork) ledger() *QueueLedger {
	var queued, maybe, consumed, ackUnknown []int64
	for id, st := range w.status {
		own := id>>itemIDBits == int64(w.r.opts.Process)
		switch {
		case st == itemConsumed:
			consumed = append(consumed, id)
		case st == itemAckUnknown:
			ackUnknown = append(ackUnknown, id)
		case st == itemQueued && own:
			queued = append(queued, id)
		case st == itemMaybe && own:
			maybe = append(maybe, id)
		}
	}
	l := &QueueLedger{Queued: rangesOf(queued), Maybe: rangesOf(maybe), Consumed: rangesOf(consumed),
		AckUnknown: rangesOf(ackUnknown), Duplicates: w.r.chk.duplicate.Load()}
	if f := w.r.fx.foreignClient(); f != nil {
		f.mu.Lock()
		l.ForeignDeleted = rangesOf(slices.Collect(maps.Keys(f.items)))
		f.mu.Unlock()
	}
	return l
}

// QueueSettlement is what SettleQueue found.
type QueueSettlement struct {
	// Lost, Duplicates and Unconsumed are Checks.LostItems,
	// DuplicateItems and Unconsumed over every process.
	Lost, Duplicates, Unconsumed int64
	// Violations describe the first lost and duplicated items.
	Violations []string
	// Remaining are the ids still queued when the processes had stopped
	// (removed since).
	Remaining map[int64]bool
	// Listed is when the queue was listed.
	Listed time.Time
}

// SettleQueue settles a queue run spread over processes once every one
// has stopped: it lists the queue below ns, removes what is left, and
// counts lost, duplicated and unconsumed items from the processes'
// ledgers (see QueueLedger).
func SettleQueue(ctx context.Context, conn *zk.Conn, ns string, ledgers []*QueueLedger) (_ QueueSettlement, err error) {
	defer func() { err = pkgerr.Wrap("loadgen", err) }()
	w := &queueWork{r: &runner{logf: func(string, ...any) {}}, path: ns + "/queue"}
	conn.Sync(w.path)
	children, _, err := conn.Children(w.path)
	out := QueueSettlement{Listed: time.Now(), Remaining: map[int64]bool{}}
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return out, fmt.Errorf("list the queue %s: %w", w.path, err)
	}
	remaining, unconsumed, err := w.removeItems(ctx, conn, children)
	if err != nil {
		return out, fmt.Errorf("remove the items left in %s: %w", w.path, err)
	}
	out.Remaining, out.Unconsumed = remaining, unconsumed
	return settle(ledgers, remaining, out), nil
}

// settle counts lost and duplicated items from the ledgers and the items
// still queued at the end.
func settle(ledgers []*QueueLedger, remaining map[int64]bool, out QueueSettlement) QueueSettlement {
	consumed := map[int64]int{}
	gone := map[int64]bool{} // consumed, or deleted by the foreign client
	for _, l := range ledgers {
		out.Duplicates += l.Duplicates
		EachItem(l.Consumed, func(id int64) { consumed[id]++ })
		EachItem(l.AckUnknown, func(id int64) { gone[id] = true })
		EachItem(l.ForeignDeleted, func(id int64) { gone[id] = true })
	}
	// An item acknowledged by two processes is a duplicate (one process's
	// own twice are in its Duplicates already).
	var dups []int64
	for id, n := range consumed {
		if n > 1 {
			dups = append(dups, id)
		}
	}
	slices.Sort(dups)
	out.Duplicates += int64(len(dups))
	for i, id := range dups {
		if i == maxViolationLines {
			break
		}
		out.Violations = append(out.Violations, fmt.Sprintf("duplicate item: item %s consumed by two processes", itemName(id)))
	}
	var lost []int64
	for _, l := range ledgers {
		EachItem(l.Queued, func(id int64) {
			if consumed[id] == 0 && !remaining[id] && !gone[id] {
				lost = append(lost, id)
			}
		})
	}
	slices.Sort(lost)
	out.Lost = int64(len(lost))
	for i, id := range lost {
		if i == maxViolationLines {
			break
		}
		out.Violations = append(out.Violations, fmt.Sprintf("lost item: item %s was queued but never consumed", itemName(id)))
	}
	return out
}

// itemName names an item of a run spread over processes: its process and
// its number there.
func itemName(id int64) string {
	return fmt.Sprintf("%d of process %d", id&(1<<itemIDBits-1), id>>itemIDBits)
}
