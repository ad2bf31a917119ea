package oracle

import (
	"context"
	"strings"
	"testing"
	"time"
)

// op builds an Op at times in milliseconds; ret < 0 is an unknown outcome.
func op(client int32, kind Kind, call, ret int64, value int64) Op {
	o := Op{Client: client, Kind: kind, Call: call * 1e6, Return: ret * 1e6, Value: value, Outcome: OK}
	if ret < 0 {
		o.Return, o.Outcome = call*1e6, Unknown
	}
	return o
}

func lost(o Op) Op { o.Outcome = Lost; return o }

func hist(model string, limit int, ops ...Op) *History {
	return &History{Model: model, Limit: limit, Partitions: []string{"/p"}, Ops: ops}
}

func TestModels(t *testing.T) {
	tests := []struct {
		name string
		h    *History
		want string
	}{
		{"mutex handoff", hist(Mutex, 0,
			op(0, Acquire, 0, 1, 10), op(1, Acquire, 0, 5, 11), op(0, Release, 3, 4, NoValue), op(1, Release, 6, 7, NoValue)), ResultOK},
		{"mutex overlap", hist(Mutex, 0,
			op(0, Acquire, 0, 1, 10), op(1, Acquire, 0, 2, 11), op(0, Release, 3, 4, NoValue), op(1, Release, 6, 7, NoValue)), ResultViolation},
		{"mutex tokens out of grant order", hist(Mutex, 0,
			op(0, Acquire, 0, 1, 11), op(0, Release, 2, 3, NoValue), op(1, Acquire, 0, 5, 10), op(1, Release, 6, 7, NoValue)), ResultViolation},
		{"mutex untokened herd", hist(Mutex, 0,
			op(0, Acquire, 0, 1, NoValue), op(0, Release, 2, 3, NoValue), op(1, Acquire, 0, 5, NoValue), op(1, Release, 6, 7, NoValue)), ResultOK},
		{"mutex untokened overlap", hist(Mutex, 0,
			op(0, Acquire, 0, 1, NoValue), op(1, Acquire, 0, 2, NoValue), op(0, Release, 3, 4, NoValue), op(1, Release, 6, 7, NoValue)), ResultViolation},
		{"mutex lost grant ends early", hist(Mutex, 0,
			op(0, Acquire, 0, 1, 10), lost(op(0, Release, 1, 9, NoValue)), op(1, Acquire, 0, 5, 11), op(1, Release, 6, 7, NoValue)), ResultOK},
		{"mutex zombie acts after loss", hist(Mutex, 0,
			op(0, Acquire, 0, 1, 10), op(0, Use, 8, 8, 10), lost(op(0, Release, 1, 9, NoValue)), op(1, Acquire, 0, 5, 11), op(1, Release, 6, 7, NoValue)), ResultViolation},
		{"mutex unknown release", hist(Mutex, 0,
			op(0, Acquire, 0, 1, 10), op(0, Release, 3, -1, NoValue), op(1, Acquire, 0, 5, 11), op(1, Release, 6, 7, NoValue)), ResultOK},
		{"mutex unknown acquire left out", hist(Mutex, 0,
			op(2, Acquire, 0, -1, NoValue), op(0, Acquire, 0, 1, 10), op(0, Release, 3, 4, NoValue), op(3, Acquire, 0, -1, NoValue)), ResultOK},
		{"election one leader", hist(Election, 0,
			op(0, Acquire, 0, 1, 5), op(0, Release, 2, 3, NoValue), op(1, Acquire, 0, 4, 6), op(1, Release, 5, 6, NoValue)), ResultOK},
		{"election two leaders", hist(Election, 0,
			op(0, Acquire, 0, 1, 5), op(1, Acquire, 0, 2, 6), op(1, Release, 3, 4, NoValue), op(0, Release, 5, 6, NoValue)), ResultViolation},
		{"rwlock readers share", hist(RWLock, 0,
			op(0, ReadAcquire, 0, 1, 1), op(1, ReadAcquire, 0, 1, 2), op(0, ReadRelease, 2, 3, NoValue), op(1, ReadRelease, 2, 3, NoValue),
			op(2, Acquire, 0, 4, 3), op(2, Release, 5, 6, NoValue)), ResultOK},
		{"rwlock writer with reader", hist(RWLock, 0,
			op(0, ReadAcquire, 0, 1, 1), op(2, Acquire, 0, 2, 3), op(0, ReadRelease, 3, 4, NoValue), op(2, Release, 5, 6, NoValue)), ResultViolation},
		{"semaphore two of two", hist(Semaphore, 2,
			op(0, Acquire, 0, 1, 1), op(1, Acquire, 0, 1, 2), op(0, Release, 2, 3, NoValue), op(2, Acquire, 0, 4, 3), op(1, Release, 5, 6, NoValue), op(2, Release, 5, 6, NoValue)), ResultOK},
		{"semaphore three of two", hist(Semaphore, 2,
			op(0, Acquire, 0, 1, 1), op(1, Acquire, 0, 1, 2), op(2, Acquire, 0, 2, 3), op(0, Release, 3, 4, NoValue), op(1, Release, 5, 6, NoValue), op(2, Release, 5, 6, NoValue)), ResultViolation},
		{"queue once each", hist(Queue, 0,
			op(0, Enqueue, 0, 1, 1), op(0, Enqueue, 2, 3, 2), op(1, Claim, 1, 4, 1), op(1, Ack, 5, 6, 1), op(2, Claim, 3, 4, 2), op(2, Ack, 5, -1, 2),
			op(0, Enqueue, 7, -1, 3), op(4, Gone, 10, 10, 1), op(4, Gone, 10, 10, 2), op(4, Gone, 10, 10, 3)), ResultOK},
		{"queue item taken twice", hist(Queue, 0,
			op(0, Enqueue, 0, 1, 1), op(1, Claim, 1, 2, 1), op(1, Ack, 2, 3, 1), op(2, Claim, 4, 5, 1), op(2, Ack, 5, 6, 1), op(4, Gone, 10, 10, 1)), ResultViolation},
		{"queue item lost", hist(Queue, 0,
			op(0, Enqueue, 0, 1, 1), op(1, Claim, 1, 2, 1), op(4, Gone, 10, 10, 1)), ResultViolation},
		{"queue item left queued", hist(Queue, 0,
			op(0, Enqueue, 0, 1, 1), op(1, Claim, 1, 2, 1), op(4, Remaining, 10, 10, 1)), ResultOK},
		{"barrier together", hist(Barrier, 2,
			op(0, Arrive, 0, 3, 0), op(1, Arrive, 2, 3, 0), op(0, Entered, 3, 3, 0), op(1, Entered, 3, 3, 0),
			op(0, Depart, 4, 6, 0), op(1, Depart, 5, 6, 0), op(0, Left, 6, 6, 0), op(1, Left, 6, 6, 0)), ResultOK},
		{"barrier entered early", hist(Barrier, 2,
			op(0, Arrive, 0, 1, 0), op(0, Entered, 1, 1, 0), op(1, Arrive, 2, 3, 0), op(1, Entered, 3, 3, 0),
			op(0, Depart, 4, 6, 0), op(1, Depart, 5, 6, 0), op(0, Left, 6, 6, 0), op(1, Left, 6, 6, 0)), ResultViolation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(context.Background(), tt.h, Options{})
			if r.Result != tt.want {
				t.Fatalf("result %s, want %s (%+v)", r.Result, tt.want, r)
			}
			if tt.want == ResultViolation && (r.Violation == nil || len(r.Violation.HTML) == 0 || len(r.Violation.Operations) == 0) {
				t.Errorf("violation without a window drawn: %+v", r.Violation)
			}
			if r.Operations != int64(len(tt.h.Ops)) {
				t.Errorf("operations %d, want %d", r.Operations, len(tt.h.Ops))
			}
		})
	}
}

// contended is a fair lock's history of n grants among c clients in a
// closed loop: every waiter's acquisition was called while the c-1 grants
// before it were held; zombie makes grant z's holder act after the next
// grant.
func contended(n, c int, zombie int) *History {
	h := hist(Mutex, 0)
	const step = 10
	for k := range n {
		cl := int32(k % c)
		call := max(0, int64(k-c+1)*step+step/2)
		granted := int64(k) * step
		h.Ops = append(h.Ops, Op{Client: cl, Kind: Acquire, Call: call * 1e6, Return: granted * 1e6, Value: int64(1000 + k), Outcome: OK})
		if k == zombie {
			h.Ops = append(h.Ops, Op{Client: cl, Kind: Use, Call: (granted + step + 2) * 1e6, Return: (granted + step + 2) * 1e6, Value: int64(1000 + k), Outcome: OK})
			h.Ops = append(h.Ops, Op{Client: cl, Kind: Release, Call: (granted+step+2)*1e6 + 1, Return: (granted + step + 3) * 1e6, Value: NoValue, Outcome: Lost})
			continue
		}
		h.Ops = append(h.Ops, Op{Client: cl, Kind: Release, Call: (granted + step - 3) * 1e6, Return: (granted + step - 1) * 1e6, Value: NoValue, Outcome: OK})
	}
	sortHist(h)
	return h
}

func sortHist(h *History) {
	r := NewRecorder(time.Time{}, 0)
	b := r.Buffer(0)
	b.ops = h.Ops
	h.Ops = r.History(h.Model, h.Limit).Ops
}

func TestRankedWindows(t *testing.T) {
	for _, zombie := range []int{-1, 3, 4321} {
		h := contended(5000, 50, zombie)
		whole := Check(context.Background(), h, Options{MaxOps: 1 << 30})
		windows := Check(context.Background(), h, Options{MaxOps: 500, Window: 97})
		want := ResultOK
		if zombie >= 0 {
			want = ResultViolation
		}
		if whole.Result != want || windows.Result != want {
			t.Fatalf("zombie %d: whole %s, windows %s, want %s", zombie, whole.Result, windows.Result, want)
		}
		if zombie < 0 && windows.Checked < int64(len(h.Ops)) {
			t.Errorf("windows checked %d of %d operations", windows.Checked, len(h.Ops))
		}
		if zombie >= 0 {
			v := windows.Violation
			if len(v.Operations) != 4 || !strings.Contains(v.Detail, "still acting") {
				t.Errorf("zombie %d: window of %d operations, %q; want the two grants", zombie, len(v.Operations), v.Detail)
			}
		}
	}
}

func TestTimedOutIsUnknown(t *testing.T) {
	// Many overlapping semaphore operations with no order to guide the
	// search, and 1 ns to search in: not checked, never ok.
	h := hist(Semaphore, 3)
	for k := range 400 {
		h.Ops = append(h.Ops, op(int32(k%40), Acquire, int64(k), int64(k+50), NoValue), op(int32(k%40), Release, int64(k+51), int64(k+90), NoValue))
	}
	sortHist(h)
	r := Check(context.Background(), h, Options{PartitionTimeout: time.Nanosecond})
	if r.Result != ResultUnknown || len(r.NotChecked) != 1 || !strings.Contains(r.NotChecked[0], "not checked (timed out after") {
		t.Fatalf("result %s, not checked %q; want unknown with the reason", r.Result, r.NotChecked)
	}
}

func TestWindowsSaySo(t *testing.T) {
	for _, overlap := range []bool{false, true} {
		h := hist(Semaphore, 1)
		for k := range 100 {
			h.Ops = append(h.Ops, op(int32(k%2), Acquire, int64(3*k), int64(3*k+1), NoValue), op(int32(k%2), Release, int64(3*k+1), int64(3*k+2), NoValue))
		}
		if overlap { // grant 70 while grant 69 still holds: in one window
			h.Ops[2*69+1].Call, h.Ops[2*69+1].Return = 212e6, 213e6
		}
		sortHist(h)
		r := Check(context.Background(), h, Options{MaxOps: 50})
		want := ResultOK
		if overlap {
			want = ResultViolation
		}
		if overlap {
			if r.Result != want || len(r.Violation.Operations) != 4 {
				t.Fatalf("overlap: result %s, window %+v; want the two grants", r.Result, r.Violation)
			}
			continue
		}
		if r.Result != want || r.Checked != 200 || r.Windowed != 1 || !strings.Contains(strings.Join(r.Notes, "\n"), "checked in 4 windows of whole grants") ||
			!strings.Contains(r.Line(), "1 partition checked in windows") {
			t.Fatalf("overlap %v: result %s checked %d windowed %d notes %q line %q", overlap, r.Result, r.Checked, r.Windowed, r.Notes, r.Line())
		}
	}
}

// TestUnknownMayNotHaveHappened: an acknowledgement whose reply was lost
// did not take effect (the item was claimed again and acknowledged), as
// in a queue-chaos run; the history is linearizable.
func TestUnknownMayNotHaveHappened(t *testing.T) {
	h := hist(Queue, 0,
		op(2, Enqueue, 0, 1, 774), op(7, Claim, 2, 3, 774), op(7, Ack, 4, -1, 774),
		op(7, Claim, 5, 6, 774), op(7, Ack, 7, 8, 774), op(8, Gone, 30, 30, 774))
	if r := Check(context.Background(), h, Options{}); r.Result != ResultOK {
		t.Fatalf("result %s (%+v), want ok", r.Result, r.Violation)
	}
}

// TestRWLockRankedIsQuick: a read/write lock's history of 6,000 grants
// among 50 clients, readers overlapping, is checked in node order without
// the search blowing up (rwlock-mix timed out unranked).
func TestRWLockRankedIsQuick(t *testing.T) {
	for _, tt := range []struct {
		longHold int64 // reader 2's hold; 25: it still holds when writer 4 is granted
		want     string
	}{{15, ResultOK}, {25, ResultViolation}} {
		h := hist(RWLock, 0)
		const step = 10
		free := map[int32]int64{} // when each client's last release returned
		for k := range 6000 {
			cl := int32(k % 50)
			call := int64(k-49)*step + 5
			if f, ok := free[cl]; ok {
				call = max(call, f+1)
			}
			call = max(call, 0)
			granted := int64(k) * step
			kind, rel, hold := ReadAcquire, ReadRelease, int64(15) // readers overlap each other
			switch {
			case k%4 == 0:
				kind, rel, hold = Acquire, Release, step-4
			case k%4 == 3:
				hold = step - 4 // the reader before a writer releases before it
			case k == 2:
				hold = tt.longHold
			}
			free[cl] = granted + hold - 1
			h.Ops = append(h.Ops, op(cl, kind, call, granted, int64(k)), op(cl, rel, granted+hold-2, granted+hold-1, NoValue))
		}
		sortHist(h)
		r := Check(context.Background(), h, Options{PartitionTimeout: 10 * time.Second})
		if r.Result != tt.want {
			t.Fatalf("reader hold %d: result %s, want %s: %v", tt.longHold, r.Result, tt.want, r.NotChecked)
		}
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{Result{Model: Mutex, Operations: 3713, Checked: 3664, Unknown: 49, Partitions: 1, Result: ResultOK, CheckS: 0.04},
			"ok (mutex: 3,713 operations in 1 partition, 49 of unknown outcome; checked in 0.0 s)"},
		{Result{Model: Semaphore, Operations: 50000, Checked: 50000, Partitions: 2, Windowed: 1, Result: ResultOK, CheckS: 1.25},
			"ok (semaphore: 50,000 operations in 2 partitions, 1 partition checked in windows; checked in 1.2 s)"},
		{Result{Model: RWLock, Operations: 10, Checked: 10, Partitions: 1, Result: ResultUnknown, NotChecked: []string{"/l: not checked (timed out after 20 s)"}},
			"unknown (rwlock: 10 operations in 1 partition): /l: not checked (timed out after 20 s)"},
		{Result{Model: Queue, Operations: 6, Checked: 6, Partitions: 3, Result: ResultViolation, Violation: &Violation{Detail: "item 7 taken twice"}},
			"violation (queue: 6 operations in 3 partitions): item 7 taken twice"},
	}
	for _, tt := range tests {
		if got := tt.r.Line(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
