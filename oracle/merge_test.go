package oracle

import (
	"slices"
	"testing"
	"time"
)

func TestEncodeOpsRoundTrip(t *testing.T) {
	ops := []Op{
		{Call: 1, Return: 5, Value: NoValue, Client: 0, Partition: 1, Kind: Acquire, Outcome: OK},
		{Call: -3, Return: 1 << 40, Value: 1<<40 + 7, Client: 12, Partition: 0, Kind: Gone, Outcome: Unknown},
	}
	s, err := EncodeOps(ops)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeOps(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, ops) {
		t.Errorf("decoded %+v, want %+v", got, ops)
	}
	if _, err := DecodeOps("not base64!"); err == nil {
		t.Errorf("decoding garbage succeeded")
	}
}

// TestMergeHistoriesOneClock: two processes' histories, started 1 ms
// apart, overlap on one lock once moved onto one clock, which neither
// shows alone.
func TestMergeHistoriesOneClock(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	a := &History{Model: Mutex, Start: t0, Partitions: []string{"/ns/lock-000"}, Ops: []Op{
		{Call: 0, Return: int64(time.Millisecond), Kind: Acquire, Outcome: OK, Value: NoValue},
		{Call: int64(5 * time.Millisecond), Return: int64(6 * time.Millisecond), Kind: Release, Outcome: OK, Value: NoValue},
	}}
	b := &History{Model: Mutex, Start: t0.Add(time.Millisecond), Partitions: []string{"/ns/other", "/ns/lock-000"}, Ops: []Op{
		{Call: int64(time.Millisecond), Return: int64(2 * time.Millisecond), Partition: 1, Kind: Acquire, Outcome: OK, Value: NoValue},
		{Call: int64(3 * time.Millisecond), Return: int64(4 * time.Millisecond), Partition: 1, Kind: Release, Outcome: OK, Value: NoValue},
	}}
	for _, h := range []*History{a, b} {
		if r := Check(t.Context(), h, Options{}); r.Result != ResultOK {
			t.Fatalf("one process's history: %s, want ok", r.Result)
		}
	}
	m := MergeHistories([]*History{a, b})
	if len(m.Ops) != 4 || !slices.Equal(m.Partitions, []string{"/ns/lock-000", "/ns/other"}) {
		t.Fatalf("merged %d ops over %v", len(m.Ops), m.Partitions)
	}
	if op := m.Ops[1]; op.Client != 1 || op.Partition != 0 || op.Call != int64(2*time.Millisecond) {
		t.Errorf("b's acquire merged as %+v, want client 1, partition 0, called at 2 ms", op)
	}
	if r := Check(t.Context(), m, Options{}); r.Result != ResultViolation {
		t.Errorf("merged history: %s, want the overlap found", r.Result)
	}
}
