package oracle

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is what an operation did.
type Kind uint8

// Operation kinds. The lock kinds serve the fair and herd locks, the
// semaphore and the election (acquire is a campaign won, release a
// resignation).
const (
	Acquire Kind = iota + 1
	Release
	ReadAcquire
	ReadRelease
	// Use is a holder acting on a grant after it was told it lost it (a
	// write to the guarded resource by a holder that ignores Lost()).
	Use
	Enqueue
	Claim
	Ack
	// Remaining and Gone are the final read of the queue, once every
	// client had stopped: the item was still there, or not.
	Remaining
	Gone
	// ForeignDelete is another client's delete of a queue item (the
	// adversary), at an unknown moment of the run.
	ForeignDelete
	// Arrive and Depart are a double barrier's Enter and Leave; Entered
	// and Left are the moments they returned (an observation: everyone
	// had arrived, or left).
	Arrive
	Entered
	Depart
	Left
)

var kindNames = [...]string{
	Acquire: "acquire", Release: "release", ReadAcquire: "read-acquire", ReadRelease: "read-release",
	Use: "use", Enqueue: "enqueue", Claim: "claim", Ack: "ack", Remaining: "remaining", Gone: "gone",
	ForeignDelete: "foreign-delete", Arrive: "arrive", Entered: "entered", Depart: "depart", Left: "left",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Outcome is how an operation ended.
type Outcome uint8

const (
	// OK: the operation took effect (Jepsen's :ok).
	OK Outcome = iota + 1
	// Unknown: it may or may not have (:info); it never returns for the
	// checker.
	Unknown
	// Lost is a release of a grant the holder was told it had lost
	// (session expired, node deleted): the server may have ended the
	// grant at any moment since it was given, so the operation's call is
	// the grant's return.
	Lost
)

// NoValue is an Op's Value when the server said nothing to record.
const NoValue = -1

// Op is one operation: fixed size (40 bytes), no pointers, so a run's
// history costs the collector nothing to scan.
type Op struct {
	// Call and Return are nanoseconds since the Recorder's start (just
	// before the run's sessions open), on the monotonic clock.
	Call, Return int64
	// Value is what the server said: the fencing token of a grant, the
	// item's id, the barrier round; NoValue when nothing.
	Value     int64
	Client    int32
	Partition int32
	Kind      Kind
	Outcome   Outcome
}

// Model names, as report.json writes them.
const (
	Mutex     = "mutex"
	RWLock    = "rwlock"
	Semaphore = "semaphore"
	Queue     = "queue"
	Election  = "election"
	Barrier   = "barrier"
)

// History is a run's operations, ordered by call.
type History struct {
	// Model is the sequential model the run's recipe follows; Limit its
	// parameter (a semaphore's permits, a barrier's size).
	Model string
	Limit int
	// Partitions names the Op.Partition indexes (lock, queue or barrier
	// paths).
	Partitions []string
	// Ops are the operations; an Op.Client of the run's client count is
	// the run itself (the queue's final read).
	Ops []Op
	// Dropped counts operations not recorded once the history was full
	// (Recorder's limit): the history is then the run's beginning.
	Dropped int64
	// Scope says what one clock covers: "" for a whole run, or which
	// process of a distributed run recorded it.
	Scope string
	// Start is the moment (wall clock) the operations' times count from.
	Start time.Time
}

// DefaultHistoryOps bounds a recorded history (40 bytes an operation: 80 MB).
const DefaultHistoryOps = 2_000_000

// Recorder collects a run's operations. Clients record into their own
// Buffer; History merges them once every client has stopped.
type Recorder struct {
	start time.Time
	max   int64

	n       atomic.Int64
	cutoff  atomic.Int64 // call time after which nothing is recorded; 0 none
	dropped atomic.Int64

	mu    sync.Mutex
	parts map[string]int32
	names []string
	bufs  []*Buffer
}

// NewRecorder starts a history at start, keeping at most maxOps
// operations (DefaultHistoryOps when 0).
func NewRecorder(start time.Time, maxOps int) *Recorder {
	if maxOps <= 0 {
		maxOps = DefaultHistoryOps
	}
	return &Recorder{start: start, max: int64(maxOps), parts: map[string]int32{}}
}

// Partition returns the index of a partition name, adding it if new.
func (r *Recorder) Partition(name string) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.parts[name]; ok {
		return i
	}
	i := int32(len(r.names))
	r.parts[name] = i
	r.names = append(r.names, name)
	return i
}

// Buffer returns a new buffer for one client's goroutine. A nil Recorder
// gives a nil Buffer, which records nothing.
func (r *Recorder) Buffer(client int) *Buffer {
	if r == nil {
		return nil
	}
	b := &Buffer{r: r, client: int32(client)}
	r.mu.Lock()
	r.bufs = append(r.bufs, b)
	r.mu.Unlock()
	return b
}

// Buffer is one goroutine's operations; not safe for concurrent use.
type Buffer struct {
	r      *Recorder
	client int32
	ops    []Op
}

// Add records an operation called at call and returned at ret. Once the
// recorder is full, operations called after the moment it filled are
// dropped (counted), so the history stays a prefix of the run.
func (b *Buffer) Add(kind Kind, part int32, call, ret time.Time, out Outcome, value int64) {
	if b == nil {
		return
	}
	r := b.r
	c := call.Sub(r.start).Nanoseconds()
	if cut := r.cutoff.Load(); cut != 0 && c > cut {
		r.dropped.Add(1)
		return
	}
	if r.n.Add(1) == r.max {
		r.cutoff.CompareAndSwap(0, max(c, 1))
	}
	b.ops = append(b.ops, Op{Call: c, Return: ret.Sub(r.start).Nanoseconds(), Value: value,
		Client: b.client, Partition: part, Kind: kind, Outcome: out})
}

// History merges the buffers, ordered by call. Call it once every
// goroutine writing to a Buffer has stopped.
func (r *Recorder) History(model string, limit int) *History {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, b := range r.bufs {
		n += len(b.ops)
	}
	ops := make([]Op, 0, n)
	for _, b := range r.bufs {
		ops = append(ops, b.ops...)
		b.ops = nil
	}
	slices.SortStableFunc(ops, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
	return &History{Model: model, Limit: limit, Partitions: slices.Clone(r.names),
		Ops: ops, Dropped: r.dropped.Load(), Start: r.start.Round(0)}
}
