package oracle

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zkherd/zkherd/internal/format"
)

// Defaults for Options.
const (
	// DefaultPartitionTimeout bounds the check of one partition.
	DefaultPartitionTimeout = 20 * time.Second
	// DefaultMaxOps is the most operations porcupine gets at once. Its
	// search keeps, per step, a copy of a bitset as long as the history
	// (a cache of the states seen): the memory grows with the square of
	// the history's length, about 100 MB at 20,000 operations of a
	// contended lock.
	DefaultMaxOps = 20_000
	// DefaultWindow is how many grants one window of a ranked lock holds.
	DefaultWindow = 500
)

// Options bound a check.
type Options struct {
	// PartitionTimeout bounds the check of one partition (every window of
	// it); defaults to DefaultPartitionTimeout.
	PartitionTimeout time.Duration
	// MaxOps is the most operations one porcupine search gets; larger
	// locks are checked in windows of grants (ranked mutexes exactly,
	// others each window alone). Defaults to DefaultMaxOps.
	MaxOps int
	// Window is how many grants a window of a ranked lock holds; defaults
	// to DefaultWindow.
	Window int
	// Workers is how many partitions are checked at once; defaults to 2.
	Workers int
}

// Results of a check.
const (
	ResultOK        = "ok"
	ResultViolation = "violation"
	ResultUnknown   = "unknown"
)

// Result is what the check found; report.json writes it as it is.
type Result struct {
	// Model is the sequential model checked, Limit its parameter (a
	// semaphore's permits, a barrier's size; 0 for the others).
	Model string `json:"model"`
	Limit int    `json:"limit,omitempty"`
	// Operations counts the recorded operations; Checked those the search
	// covered (fewer when the check stopped at a violation or a timeout,
	// more when windows repeat a release); Unknown those whose
	// outcome was unknown (they may or may not have taken effect).
	Operations int64 `json:"operations"`
	Checked    int64 `json:"checked"`
	Unknown    int64 `json:"unknown"`
	// Partitions counts the independent histories checked (locks, queue
	// items, barrier rounds); Windowed how many of them were too long for
	// one search and were checked in windows of whole grants, without the
	// order across windows (the notes name them).
	Partitions int `json:"partitions"`
	Windowed   int `json:"windowed,omitempty"`
	// Result is ok, violation or unknown (a partition not checked).
	Result string `json:"result"`
	// Scope says which operations one clock orders: "run" (one process
	// recorded them all) or the process of a distributed run.
	Scope string `json:"scope"`
	// CheckS is how long the check took, in seconds; HeapMiB the most
	// heap the process held while it ran (sampled every 100 ms; the run's
	// own data included).
	CheckS  float64 `json:"check_s"`
	HeapMiB float64 `json:"heap_mib"`
	// NotChecked names partitions the search did not finish, and why.
	NotChecked []string `json:"not_checked,omitempty"`
	// Notes say what was checked how: windows, dropped
	// operations, what the model leaves out.
	Notes []string `json:"notes,omitempty"`
	// Violation is the smallest failing window found, if any.
	Violation *Violation `json:"violation,omitempty"`
}

// Violation is a window of operations no order of which the model
// accepts.
type Violation struct {
	Partition  string     `json:"partition"`
	Detail     string     `json:"detail"`
	Operations []WindowOp `json:"operations"`
	// HTML is porcupine's visualisation of the window: the operations by
	// client, the longest orders the model accepted, where each stops.
	HTML []byte `json:"-"`
}

// WindowOp is one operation of a failing window, times in milliseconds
// since the history's start; Return is nil when the outcome was unknown.
type WindowOp struct {
	Client   int32    `json:"client"`
	Kind     string   `json:"kind"`
	Value    int64    `json:"value"`
	Outcome  string   `json:"outcome"`
	CallMs   float64  `json:"call_ms"`
	ReturnMs *float64 `json:"return_ms"`
}

// Line is the result in one line for the summary.
func (r *Result) Line() string {
	what := fmt.Sprintf("%s: %s operations in %s", r.Model, format.Count(r.Operations), plural(r.Partitions, "partition"))
	if r.Unknown > 0 {
		what += fmt.Sprintf(", %s of unknown outcome", format.Count(r.Unknown))
	}
	if r.Windowed > 0 {
		what += fmt.Sprintf(", %s checked in windows", plural(r.Windowed, "partition"))
	}
	switch r.Result {
	case ResultViolation:
		return fmt.Sprintf("violation (%s): %s", what, r.Violation.Detail)
	case ResultUnknown:
		return fmt.Sprintf("unknown (%s): %s", what, r.NotChecked[0])
	}
	return fmt.Sprintf("ok (%s; checked in %.1f s)", what, r.CheckS)
}

// Check checks a history for linearizability against its model.
func Check(ctx context.Context, h *History, o Options) *Result {
	began := time.Now()
	stopHeap := watchHeap()
	o.PartitionTimeout = cmp.Or(o.PartitionTimeout, DefaultPartitionTimeout)
	o.MaxOps = cmp.Or(o.MaxOps, DefaultMaxOps)
	o.Window = cmp.Or(o.Window, DefaultWindow)
	o.Workers = cmp.Or(o.Workers, 2)
	res := &Result{Model: h.Model, Limit: h.Limit, Operations: int64(len(h.Ops)), Scope: cmp.Or(h.Scope, "run")}
	if h.Dropped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the history was full: %s later operations were not recorded; the run's beginning was checked", format.Count(h.Dropped)))
	}
	parts := split(h)
	res.Partitions = len(parts)
	for _, op := range h.Ops {
		if op.Outcome == Unknown {
			res.Unknown++
		}
	}
	if h.Model == Queue {
		res.Notes = append(res.Notes, "queue: each item taken at most once and none lost; FIFO order not checked (a claim takes the lowest unclaimed item, and an item whose claimer's session ends is claimed again later, so claims are not a FIFO dequeue)")
	}
	if res.Unknown > 0 && isLock(h.Model) {
		res.Notes = append(res.Notes, "acquisitions whose outcome is unknown are left out: the recipe deletes the node of a failed attempt, so such a grant, if it happened, ended at once")
	}

	var (
		mu      sync.Mutex
		results = make([]partResult, len(parts))
		jobs    = make(chan int)
		wg      sync.WaitGroup
	)
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				pr := checkPart(ctx, h, parts[i], o)
				mu.Lock()
				results[i] = pr
				mu.Unlock()
			}
		}()
	}
	for i := range parts {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	res.Result = ResultOK
	var first *found
	for i, pr := range results {
		res.Checked += pr.checked
		if pr.independent {
			res.Windowed++
		}
		res.Notes = append(res.Notes, pr.notes...)
		switch {
		case pr.violation != nil:
			if first == nil || pr.violation.first < first.first {
				first = pr.violation
			}
		case pr.timedOut:
			res.NotChecked = append(res.NotChecked, fmt.Sprintf("%s: not checked (timed out after %s)", parts[i].name, secs(o.PartitionTimeout)))
		}
	}
	switch {
	case first != nil:
		res.Result, res.Violation = ResultViolation, &first.Violation
	case len(res.NotChecked) > 0:
		res.Result = ResultUnknown
	}
	res.CheckS = math.Round(time.Since(began).Seconds()*1000) / 1000
	res.HeapMiB = math.Round(float64(stopHeap())/(1<<20)*10) / 10
	return res
}

func isLock(model string) bool {
	return model == Mutex || model == Election || model == RWLock || model == Semaphore
}

// part is one independent sub-history: the indexes of its operations in
// History.Ops, in call order.
type part struct {
	name string
	ops  []int
}

// split partitions a history by path, and queues by item and barriers by
// round (every item and round is independent of the others).
func split(h *History) []part {
	type key struct {
		p   int32
		sub int64
	}
	byItem := h.Model == Queue || h.Model == Barrier
	idx := map[key]int{}
	var parts []part
	for i, op := range h.Ops {
		k := key{p: op.Partition}
		if byItem {
			k.sub = op.Value
		}
		j, ok := idx[k]
		if !ok {
			j = len(parts)
			idx[k] = j
			name := "?"
			if int(op.Partition) < len(h.Partitions) {
				name = h.Partitions[op.Partition]
			}
			switch h.Model {
			case Queue:
				name = fmt.Sprintf("%s item %d", name, op.Value)
			case Barrier:
				name = fmt.Sprintf("%s round %d", name, op.Value)
			}
			parts = append(parts, part{name: name})
		}
		parts[j].ops = append(parts[j].ops, i)
	}
	return parts
}

// partResult is one partition's outcome.
type partResult struct {
	checked  int64
	timedOut bool
	// independent: checked in windows with no order across them.
	independent bool
	notes       []string
	violation   *found
}

// found is a violation and when its window starts, to report the first.
type found struct {
	Violation
	first int64
}

const never = math.MaxInt64

// porcOp makes porcupine's operation of an Op.
func porcOp(h *History, i int, rank int64) porcupine.Operation {
	op := h.Ops[i]
	ret := max(op.Return, op.Call) // the monotonic clock never goes back; a hand-made history might
	if op.Outcome == Unknown {
		ret = never // Jepsen's :info: it may take effect at any time after its call
	}
	return porcupine.Operation{ClientId: int(op.Client), Call: op.Call, Return: ret, Metadata: i,
		Input: input{kind: op.Kind, client: op.Client, rank: rank, lost: op.Outcome == Lost, unknown: op.Outcome == Unknown, value: op.Value}}
}

// skipped reports whether an operation is left out of the search: an
// acquisition that failed or whose outcome is unknown (see Check's note).
func skipped(op Op) bool {
	return op.Outcome != OK && (op.Kind == Acquire || op.Kind == ReadAcquire)
}

func checkPart(ctx context.Context, h *History, p part, o Options) partResult {
	switch h.Model {
	case Mutex, Election:
		if g, ok := grantsOf(h, p); ok && rankGrants(h, g) {
			return checkRanked(ctx, h, p, g, o)
		}
		return checkFlat(ctx, h, p, lockModel(lockState{holder: -1, next: -1}, holderName(h.Model)), o)
	case RWLock:
		if g, ok := grantsOf(h, p); ok && rankGrants(h, g) {
			return checkUnits(ctx, h, p.name, rankedRW, unitsOf(h, g, true), o)
		}
		return checkFlat(ctx, h, p, rwModel(-1), o)
	case Semaphore:
		if g, ok := grantsOf(h, p); ok && rankGrants(h, g) {
			return checkUnits(ctx, h, p.name, func(first []porcupine.Operation) porcupine.Model {
				return semModel(h.Limit, first[0].Input.(input).rank)
			}, unitsOf(h, g, true), o)
		}
		return checkFlat(ctx, h, p, semModel(h.Limit, -1), o)
	case Queue:
		return checkFlat(ctx, h, p, itemModel(), o)
	case Barrier:
		return checkFlat(ctx, h, p, barrierModel(h.Limit), o)
	}
	return partResult{notes: []string{fmt.Sprintf("no model for %q", h.Model)}, timedOut: true}
}

func holderName(model string) string {
	if model == Election {
		return "leader"
	}
	return "held by"
}

// checkFlat checks a partition in one search, or a lock's in windows of
// whole grants (checkUnits).
func checkFlat(ctx context.Context, h *History, p part, m porcupine.Model, o Options) partResult {
	var units [][]porcupine.Operation
	if gs, ok := grantsOf(h, p); ok && isLock(h.Model) {
		units = unitsOf(h, gs, false)
	} else {
		var ops []porcupine.Operation
		for _, i := range p.ops {
			if !skipped(h.Ops[i]) {
				ops = append(ops, porcOp(h, i, -1))
			}
		}
		units = [][]porcupine.Operation{ops}
	}
	return checkUnits(ctx, h, p.name, func([]porcupine.Operation) porcupine.Model { return m }, units, o)
}

// A modelFor makes the model that checks units starting with first: a
// ranked model starts at the first unit's rank.
type modelFor func(first []porcupine.Operation) porcupine.Model

// rankedRW is the ranked read/write lock from its first grant's rank.
func rankedRW(first []porcupine.Operation) porcupine.Model {
	return rwModel(first[0].Input.(input).rank)
}

// checkUnits checks units (whole grants, or one partition); above MaxOps
// operations in consecutive windows of whole grants, each checked alone
// (any set of whole grants of a linearizable lock history is linearizable,
// so a violation in a window is one of the run; an order that only a
// whole search would find impossible, across windows, is missed, and the
// notes say so). A ranked lock's units are in rank order.
func checkUnits(ctx context.Context, h *History, name string, mk modelFor, units [][]porcupine.Operation, o Options) partResult {
	if len(units) == 0 || len(units[0]) == 0 {
		return partResult{}
	}
	deadline := time.Now().Add(o.PartitionTimeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var pr partResult
	windows := 0
	for start := 0; start < len(units); windows++ {
		end, n := start, 0
		for end < len(units) && (end == start || n+len(units[end]) <= o.MaxOps) {
			n += len(units[end])
			end++
		}
		w := units[start:end]
		pr.checked += int64(n)
		switch runCheck(ctx, mk(w[0]), flatten(w), time.Until(deadline)) {
		case porcupine.Illegal:
			pr.violation = shrinkUnits(h, name, mk, w, o.PartitionTimeout)
			return pr
		case porcupine.Unknown:
			pr.timedOut = true
			return pr
		}
		start = end
	}
	if windows > 1 {
		pr.independent = true
		pr.notes = append(pr.notes, fmt.Sprintf("%s: checked in %d windows of whole grants, at most %s operations each (the search's memory grows with the square of its history); an order across windows is not checked",
			name, windows, format.Count(int64(o.MaxOps))))
	}
	return pr
}

func runCheck(ctx context.Context, m porcupine.Model, ops []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	if timeout <= 0 || ctx.Err() != nil {
		return porcupine.Unknown
	}
	return porcupine.CheckOperationsTimeout(m, ops, timeout)
}

// shrinkUnits narrows failing units (whole grants, or one partition) to
// a small failing window: the shortest failing prefix, then the latest
// start that still fails with it.
func shrinkUnits(h *History, name string, mk modelFor, units [][]porcupine.Operation, timeout time.Duration) *found {
	fails := func(u [][]porcupine.Operation) bool {
		return porcupine.CheckOperationsTimeout(mk(u[0]), flatten(u), timeout) == porcupine.Illegal
	}
	lo, hi := 1, len(units) // units[:hi] fails
	for lo < hi {
		if mid := (lo + hi) / 2; fails(units[:mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	from, to := 0, hi-1 // units[from:hi] fails
	for from < to {
		if mid := (from + to + 1) / 2; fails(units[mid:hi]) {
			from = mid
		} else {
			to = mid - 1
		}
	}
	ops := flatten(units[from:hi])
	return window(h, name, mk(units[from]), ops, fmt.Sprintf("no order of these %d operations on %s satisfies the %s model", len(ops), name, h.Model), timeout)
}

// window makes the violation of a failing window, with porcupine's
// visualisation of it.
func window(h *History, name string, m porcupine.Model, ops []porcupine.Operation, detail string, timeout time.Duration) *found {
	f := &found{Violation: Violation{Partition: name, Detail: detail}, first: never}
	for _, op := range ops {
		o := h.Ops[op.Metadata.(int)]
		f.first = min(f.first, o.Call)
		w := WindowOp{Client: o.Client, Kind: o.Kind.String(), Value: o.Value, Outcome: outcomeName(o.Outcome), CallMs: ms(op.Call)}
		if op.Return != never {
			r := ms(op.Return)
			w.ReturnMs = &r
		}
		f.Operations = append(f.Operations, w)
	}
	res, info := porcupine.CheckOperationsVerbose(m, ops, timeout)
	if res == porcupine.Illegal {
		var b bytes.Buffer
		if err := porcupine.Visualize(m, info, &b); err == nil {
			f.HTML = b.Bytes()
		}
	}
	return f
}

func ms(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

func outcomeName(o Outcome) string {
	switch o {
	case OK:
		return "ok"
	case Lost:
		return "lost"
	}
	return "unknown"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return format.Count(int64(n)) + " " + what + "s"
}

func secs(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }

// sortOps orders porcupine operations by call.
func sortOps(ops []porcupine.Operation) {
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
}

// Merge joins the checks of the processes of a distributed run, each
// tagged (for example "process 2: "): one clock orders each process's
// operations, not the operations of several, so each was checked alone.
func Merge(results []*Result, tags []string) *Result {
	var out *Result
	rank := map[string]int{ResultOK: 0, ResultUnknown: 1, ResultViolation: 2}
	for i, r := range results {
		if r == nil {
			continue
		}
		if out == nil {
			out = &Result{Model: r.Model, Limit: r.Limit, Result: ResultOK}
		}
		tag := tags[i]
		out.Operations += r.Operations
		out.Checked += r.Checked
		out.Unknown += r.Unknown
		out.Partitions += r.Partitions
		out.Windowed += r.Windowed
		out.CheckS = max(out.CheckS, r.CheckS)
		if rank[r.Result] > rank[out.Result] {
			out.Result = r.Result
		}
		for _, n := range r.NotChecked {
			out.NotChecked = append(out.NotChecked, tag+n)
		}
		for _, n := range r.Notes {
			out.Notes = append(out.Notes, tag+n)
		}
		if r.Violation != nil && out.Violation == nil {
			v := *r.Violation
			v.Partition = tag + v.Partition
			out.Violation = &v
		}
	}
	if out != nil {
		out.Scope = fmt.Sprintf("per process (%d processes, each checked on its own clock); across processes, grants are ordered by the fencing check", len(results))
	}
	return out
}

// watchHeap samples the heap's live objects every 100 ms until the
// returned function is called, which returns the most seen.
func watchHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	peak := read()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return max(peak, read())
	}
}
