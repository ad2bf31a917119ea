package loadgen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// queueWork drives a queue: the first Producers clients put items (on the
// arrival schedule), the others claim, work on and acknowledge them (the
// lock-safe way: an item stays queued until acknowledged). Every item
// carries a unique id and its enqueue time, so the run checks that each is
// consumed exactly once and measures queue wait and end-to-end latency.
//
// When the window ends, producers stop and consumers drain the queue (for
// at most drainTimeout) before they stop too; items still queued then are
// counted as unconsumed, not lost.
type queueWork struct {
	r         *runner
	path      string
	part      int32 // the queue's partition of the history
	producers int

	nextID   atomic.Int64
	put      atomic.Int64 // items confirmed in the queue
	putIn    atomic.Int64 // of which during the window
	acked    atomic.Int64 // items acknowledged
	prodLeft atomic.Int64 // producer loops still running
	prodDone chan struct{}

	mu     sync.Mutex
	status map[int64]uint8 // by item id

	drainOnce   sync.Once
	drainCtx    context.Context
	drainCancel context.CancelFunc

	depthMu sync.Mutex
	depths  []int64 // sampled once per interval
}

// Item states.
const (
	itemMaybe    uint8 = iota + 1 // Put failed: the item may or may not be queued
	itemQueued                    // Put confirmed
	itemConsumed                  // acknowledged
	// itemAckUnknown: the acknowledgement failed as the session ended; it
	// may have been carried out (item gone, consumed) or not (item back in
	// the queue for another consumer).
	itemAckUnknown
)

// drainTimeout bounds how long consumers keep draining after the window;
// removeTimeout how long removing the items left after that may take.
const (
	drainTimeout  = 10 * time.Second
	removeTimeout = time.Minute
)

func newQueueWork(r *runner) (*queueWork, error) {
	q := r.run.Queue
	if q == nil || q.Producers < 1 || q.Consumers < 1 || q.Producers+q.Consumers != r.run.Clients {
		return nil, fmt.Errorf("%w: a queue run needs at least one producer and one consumer, adding up to the clients", ErrBadOptions)
	}
	w := &queueWork{
		r:         r,
		path:      r.ns + "/queue",
		producers: q.Producers,
		prodDone:  make(chan struct{}),
		status:    make(map[int64]uint8),
	}
	w.part = r.hist.Partition(w.path)
	w.prodLeft.Store(int64(q.Producers))
	if r.opts.SharedNamespace {
		w.nextID.Store(int64(r.opts.Process) << itemIDBits) // unique across processes
	}
	w.drainCtx, w.drainCancel = context.WithCancel(context.Background())
	return w, nil
}

func (w *queueWork) mainPhase() metrics.Phase { return metrics.EndToEnd }
func (w *queueWork) model() (string, int)     { return oracle.Queue, 0 }
func (w *queueWork) foreignTargets() ([]string, int, error) {
	return []string{w.path}, 1, nil
}
func (w *queueWork) extraPhases() []metrics.Phase {
	return nil
}
func (w *queueWork) slotOf(i int) int {
	if i < w.producers {
		return 0
	}
	return 1
}

// recvBuffer fits a listing of tens of thousands of items.
func (w *queueWork) recvBuffer() int { return max(childListBuffer(w.r.run.Clients), 2<<20) }

func (w *queueWork) prepare(_ context.Context, conn *zk.Conn) error {
	return createDirs(conn, []string{w.path})
}

// depth is how many items are queued: this process's puts less its
// acknowledgements, or, in a queue shared with other processes, the
// queue's items as the servers list them (a request per call, made once
// per interval and while draining).
func (w *queueWork) depth() int64 {
	if !w.r.opts.SharedNamespace {
		return w.put.Load() - w.acked.Load()
	}
	if w.r.admin == nil {
		return 0
	}
	children, _, err := w.r.admin.Conn().Children(w.path)
	if err != nil {
		return 0
	}
	var n int64
	for _, c := range children {
		if !strings.HasSuffix(c, recipes.ClaimSuffix) {
			n++
		}
	}
	return n
}

func (w *queueWork) sample() {
	w.depthMu.Lock()
	w.depths = append(w.depths, w.depth())
	w.depthMu.Unlock()
}

func (w *queueWork) loop(c *client) {
	if c.slot == 0 {
		w.produce(c)
		return
	}
	w.drainOnce.Do(func() { go w.drainWatch() })
	w.consume(c)
}

// drainWatch ends the consumers: at once when the caller cancelled the
// run, otherwise once the producers have stopped and the queue is empty,
// or drainTimeout after that.
func (w *queueWork) drainWatch() {
	defer w.drainCancel()
	r := w.r
	select {
	case <-r.stopCh:
	case <-w.prodDone:
	case <-w.drainCtx.Done():
		return
	}
	// A backlog the consumers cannot clear within drainTimeout at their
	// rate so far is not waited for: it is removed with the namespace.
	if win := r.windowElapsed().Seconds(); win > 0 {
		if rate := float64(w.acked.Load()) / win; float64(w.depth()) > rate*drainTimeout.Seconds() {
			r.logf("queue: %d items left, more than the consumers clear in %v at %.1f/s; not draining", w.depth(), drainTimeout, rate)
			return
		}
	}
	deadline := time.Now().Add(drainTimeout)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for w.depth() > 0 && time.Now().Before(deadline) && r.parent.Err() == nil {
		select {
		case <-t.C:
		case <-r.parent.Done():
		}
	}
}

func (w *queueWork) produce(c *client) {
	r := w.r
	defer func() {
		if w.prodLeft.Add(-1) == 0 {
			close(w.prodDone)
		}
	}()
	var (
		q     *recipes.Queue
		bound *recipes.Session
	)
	for first := true; ; first = false {
		intended, ok := r.next(first)
		if !ok {
			return
		}
		s := r.session(c)
		if s == nil {
			return
		}
		if s != bound {
			q, bound = recipes.NewQueue(s, w.path), s
		}
		id := w.nextID.Add(1)
		start := time.Now()
		data := strconv.FormatInt(id, 10) + " " + strconv.FormatInt(start.UnixNano(), 10)
		_, err := q.Put(r.opCtx, []byte(data))
		done := time.Now()
		c.hist.Add(oracle.Enqueue, w.part, start, done, outcomeOf(err), id)
		w.putDone(id, err)
		if err != nil {
			r.opFailed(err)
			continue
		}
		w.put.Add(1)
		if !r.stopping() {
			w.putIn.Add(1)
			r.recordAcquire(c, metrics.Enqueue, start, intended, done)
		}
	}
}

// parseItem reads an item's id and enqueue time.
func parseItem(data []byte) (id int64, at time.Time, ok bool) {
	a, b, found := strings.Cut(string(data), " ")
	if !found {
		return 0, time.Time{}, false
	}
	id, err1 := strconv.ParseInt(a, 10, 64)
	ns, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, time.Time{}, false
	}
	return id, time.Unix(0, ns), true
}

func (w *queueWork) consume(c *client) {
	r := w.r
	sampler := scenarios.NewSampler(r.run.Hold, r.run.Seed, uint64(c.idx))
	var (
		q     *recipes.Queue
		bound *recipes.Session
	)
	for w.drainCtx.Err() == nil {
		s := r.session(c)
		if s == nil {
			// Stopping: sessions are no longer replaced; drain with the one
			// we have, if it lives.
			if s = c.session(); s == nil {
				return
			}
		}
		if s != bound {
			q, bound = recipes.NewQueue(s, w.path), s
		}
		start := time.Now()
		cl, err := q.Claim(w.drainCtx)
		if err != nil {
			if w.drainCtx.Err() == nil {
				r.opFailed(err)
				if errors.Is(err, recipes.ErrSessionClosed) {
					return
				}
			}
			continue
		}
		claimed := time.Now()
		id, enq, ok := parseItem(cl.Data)
		if ok {
			c.hist.Add(oracle.Claim, w.part, start, claimed, oracle.OK, id)
		}
		inWindow := !r.stopping()
		if inWindow {
			c.shard.Record(metrics.Dequeue, claimed.Sub(start))
			if ok {
				c.shard.Record(metrics.QueueWait, claimed.Sub(enq))
			}
			r.hold(sampler.Next(), nil)
			c.shard.Record(metrics.Hold, time.Since(claimed))
		}
		ackStart := time.Now()
		err = r.release(s, cl.Ack, nil)
		if ok {
			c.hist.Add(oracle.Ack, w.part, ackStart, time.Now(), outcomeOf(err), id)
		}
		if err != nil {
			r.opFailed(err)
			// Whatever the error, the acknowledgement may have been applied
			// (a multi whose reply was lost, then a reconnection longer
			// than the release's deadline: TestQueueChaos saw three such
			// items counted lost). Only an acknowledgement removes an item,
			// so finish counts it consumed if it is gone, unconsumed if not.
			if id, _, ok := parseItem(cl.Data); ok {
				w.mu.Lock()
				if w.status[id] != itemConsumed {
					w.status[id] = itemAckUnknown
				}
				w.mu.Unlock()
			}
			continue
		}
		acked := time.Now()
		w.acked.Add(1)
		if !ok {
			r.chk.note("queue", &r.chk.mutex, "item %s holds %q, not an item of this run", cl.Item(), cl.Data)
			continue
		}
		w.mu.Lock()
		prev := w.status[id]
		w.status[id] = itemConsumed
		w.mu.Unlock()
		if prev == itemConsumed {
			r.chk.note("duplicate item", &r.chk.duplicate, "item %d consumed twice", id)
		}
		if inWindow {
			r.opDone(func() { c.shard.Record(metrics.EndToEnd, acked.Sub(enq)) })
		}
	}
}

// finish counts items still queued (and removes them), then items lost:
// confirmed in the queue but neither consumed nor still there.
func (w *queueWork) finish(ctx context.Context, conn *zk.Conn) (out workResult) {
	r := w.r
	w.depthMu.Lock()
	out.queueDepth = append([]int64(nil), w.depths...)
	w.depthMu.Unlock()
	if warning := w.saturation(out.queueDepth); warning != "" {
		out.warnings = append(out.warnings, warning)
	}
	if r.opts.SharedNamespace {
		// Other processes' consumers took some of this process's items,
		// and may still be at work: the process that merges the run
		// settles the items of every process (SettleQueue).
		w.mu.Lock()
		out.ledger = w.ledger()
		w.mu.Unlock()
		out.notes = append(out.notes, SharedQueueNote)
		return out
	}
	conn.Sync(w.path) // the admin's server may lag behind the clients' writes
	tooLarge, _ := r.admin.RepliesTooLarge()
	children, _, err := conn.Children(w.path)
	listed := time.Now()
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		out.notChecked = append(out.notChecked, fmt.Sprintf("lost items: could not list the queue to count them: %v", r.listingErr(w.path, err, tooLarge)))
		return out
	}
	remaining, unconsumed, err := w.removeItems(ctx, conn, children)
	out.unconsumed = unconsumed
	if err != nil {
		out.notes = append(out.notes, fmt.Sprintf("could not remove every leftover queue item: %v", err))
		return out
	}
	if unconsumed > 0 {
		out.notes = append(out.notes, leftoverNote(unconsumed))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.finalRead(listed, remaining)
	for id, st := range w.status {
		// An item whose acknowledgement's outcome is unknown and that is
		// gone was consumed: only an acknowledgement removes an item.
		if st == itemQueued && !remaining[id] {
			if f := r.fx.foreignClient(); f != nil && f.deletedItem(id) {
				continue // counted by the foreign client
			}
			out.lostItems++
			if out.lostItems <= maxViolationLines {
				r.chk.note("lost item", &r.chk.lost, "item %d was queued but never consumed", id)
			}
		}
	}
	out.duplicateItems = r.chk.duplicate.Load()
	return out
}

// saturation is a warning when the backlog grew through the window
// (depths sampled once per interval), "" otherwise: the consumers could
// not keep up with the producers, so queue wait and end-to-end latency
// measure the backlog, not the queue.
func (w *queueWork) saturation(depths []int64) string {
	r := w.r
	ws, stop := r.windowStartTime(), r.stopAt
	win := stop.Sub(ws).Seconds()
	if ws.IsZero() || win <= 0 {
		return ""
	}
	var inWindow []int64
	for i, d := range depths {
		at := r.start.Add(time.Duration(i+1) * r.opts.Interval)
		if !at.Before(ws) && !at.After(stop) {
			inWindow = append(inWindow, d)
		}
	}
	produced, consumed := float64(w.putIn.Load())/win, float64(r.ops.Load())/win
	if len(inWindow) == 0 || produced <= consumed {
		return ""
	}
	// A backlog that grew through the window, or, with too few samples to
	// see a trend (a short or starved run), producers well ahead of the
	// consumers with more items queued than they hold at once.
	last := inWindow[len(inWindow)-1]
	ahead := produced > 1.5*consumed && last > int64(2*r.run.Queue.Consumers)
	if !backlogGrew(inWindow, r.run.Queue.Consumers) && !ahead {
		return ""
	}
	wait := ""
	if s := r.rec.Summary(metrics.QueueWait); s.Count > 0 {
		wait = fmt.Sprintf(", queue wait p50 %s", format.Ms(s.P50))
	}
	return saturationWarning(produced, consumed, last, wait)
}

// saturationWarning is the warning of a queue whose backlog grew through
// the window; wait is ", queue wait p50 X" or empty.
func saturationWarning(produced, consumed float64, backlog int64, wait string) string {
	return fmt.Sprintf("queue saturated: producers added %.1f/s, consumers took %.1f/s; the backlog grew to %s items through the window%s (add consumers, shorten the work or lower the rate)",
		produced, consumed, format.Count(backlog), wait)
}

// leftoverNote is the note of the items still queued when the run stopped.
func leftoverNote(n int64) string {
	return fmt.Sprintf("%s item(s) were still queued when the run stopped (removed)", format.Count(n))
}

// backlogGrew reports whether a queue's depth, sampled once per interval
// through the window, grew through it: at the end it is well above
// anything seen in the first half, and more than the consumers hold at
// once. A depth that rises and falls with bursts does not count.
func backlogGrew(depths []int64, consumers int) bool {
	n := len(depths)
	if n < 3 {
		return false
	}
	last, early := depths[n-1], slices.Max(depths[:n/2])
	return last > int64(2*consumers) && float64(last) > 1.5*float64(early)
}

// removeItems reads and deletes the queue's leftover nodes, many requests
// in flight at once (go-zookeeper pipelines them on one connection), with a
// progress line every few seconds; it returns the ids still queued and how
// many items there were. It gives up at ctx's end.
func (w *queueWork) removeItems(ctx context.Context, conn *zk.Conn, children []string) (map[int64]bool, int64, error) {
	r := w.r
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	remaining := map[int64]bool{}
	if len(children) == 0 {
		return remaining, 0, nil
	}
	if len(children) > 1000 {
		r.logf("queue: removing %d leftover items", len(children))
	}
	var (
		mu       sync.Mutex
		items    int64
		done     atomic.Int64
		firstErr error
		wg       sync.WaitGroup
	)
	jobs := make(chan string)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range jobs {
				p := w.path + "/" + name
				if !strings.HasSuffix(name, recipes.ClaimSuffix) {
					if data, _, err := conn.Get(p); err == nil {
						id, _, ok := parseItem(data)
						mu.Lock()
						items++
						if ok {
							remaining[id] = true
						}
						mu.Unlock()
					}
				}
				if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
				done.Add(1)
			}
		}()
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	started := time.Now()
feed:
	for _, name := range children {
		select {
		case jobs <- name:
		case <-tick.C:
			r.logf("queue: removed %d of %d leftover items", done.Load(), len(children))
			jobs <- name
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if len(children) > 1000 {
		r.logf("queue: removed %d leftover items in %.1fs", done.Load(), time.Since(started).Seconds())
	}
	if err := ctx.Err(); err != nil && done.Load() < int64(len(children)) {
		return remaining, items, fmt.Errorf("%d of %d removed: %w", done.Load(), len(children), err)
	}
	if firstErr != nil {
		return remaining, items, firstErr
	}
	return remaining, items, nil
}

// finalRead records, in the history, the queue's listing once every
// client had stopped (at listed), as client Clients: each item put was
// still queued or gone. An item another client deleted was removed by it
// at some moment of the run: each such delete is a client of its own
// (Clients+1, +2, ...), since the deletes overlap in time and a history's
// client has one operation open at a time. Called with w.mu held.
func (w *queueWork) finalRead(listed time.Time, remaining map[int64]bool) {
	r := w.r
	b := r.hist.Buffer(r.run.Clients)
	deleters := r.run.Clients
	for id := range w.status {
		kind := oracle.Gone
		if remaining[id] {
			kind = oracle.Remaining
		} else if f := r.fx.foreignClient(); f != nil && f.deletedItem(id) {
			deleters++
			r.hist.Buffer(deleters).Add(oracle.ForeignDelete, w.part, r.start, listed, oracle.OK, id)
		}
		b.Add(kind, w.part, listed, listed, oracle.OK, id)
	}
}

// outcomeOf is a call's outcome in the history: a failed Put or Ack may
// have been applied (its reply lost), so its outcome is unknown.
func outcomeOf(err error) oracle.Outcome {
	if err != nil {
		return oracle.Unknown
	}
	return oracle.OK
}

// putDone records the outcome of item id's Put, unless a consumer has
// already taken the item: a Put whose reply is delayed (a lagging member)
// can return after its item was claimed and acknowledged. The oracle found
// it in queue-adversary: item 2055 was acknowledged 130 ms before its Put
// returned, which then marked it queued again, and the run counted it
// (and 56 others) lost.
func (w *queueWork) putDone(id int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status[id] != 0 {
		return
	}
	if err != nil {
		w.status[id] = itemMaybe
	} else {
		w.status[id] = itemQueued
	}
}
