package loadgen

import (
	"errors"
	"strings"
	"testing"
)

// TestQueueWarningCounts: the saturation warning and the leftover note
// write their item counts as every other count in the summary is written
// (12,870), not 12870.
func TestQueueWarningCounts(t *testing.T) {
	got := saturationWarning(396, 83, 12870, ", queue wait p50 18.6s")
	for _, want := range []string{"producers added 396.0/s", "consumers took 83.0/s", "the backlog grew to 12,870 items", "queue wait p50 18.6s"} {
		if !strings.Contains(got, want) {
			t.Errorf("warning %q lacks %q", got, want)
		}
	}
	if got, want := leftoverNote(12870), "12,870 item(s) were still queued when the run stopped (removed)"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}

// TestPutReturningAfterAckIsNotLost: a Put whose reply came after its item
// was consumed leaves the item consumed (queue-adversary counted such
// items lost).
func TestPutReturningAfterAckIsNotLost(t *testing.T) {
	w := &queueWork{status: map[int64]uint8{2055: itemConsumed, 7: itemAckUnknown}}
	w.putDone(2055, nil)
	w.putDone(7, nil)
	w.putDone(8, nil)
	w.putDone(9, errors.New("connection lost"))
	for id, want := range map[int64]uint8{2055: itemConsumed, 7: itemAckUnknown, 8: itemQueued, 9: itemMaybe} {
		if got := w.status[id]; got != want {
			t.Errorf("item %d: status %d, want %d", id, got, want)
		}
	}
}
