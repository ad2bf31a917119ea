package inspect

import (
	"testing"
	"time"
)

// TestStillnessDoubles: each read that finds a directory unchanged doubles
// the time to its next read, from a poll interval up to the cap; a change,
// or an anomaly to confirm, brings it back to every poll.
func TestStillnessDoubles(t *testing.T) {
	const poll, limit = time.Second, 8 * time.Second
	var s stillness
	at := time.Unix(1000, 0)
	var gaps []time.Duration
	for _, same := range []bool{false, true, true, true, true, true, false, true} {
		s.read(at, same, false, poll, limit)
		gaps = append(gaps, s.gap)
		at = at.Add(s.gap)
	}
	want := []time.Duration{0, poll, 2 * poll, 4 * poll, limit, limit, 0, poll}
	for i := range want {
		if gaps[i] != want[i] {
			t.Fatalf("gaps %v, want %v", gaps, want)
		}
	}
	s.read(at, true, true, poll, limit)
	if s.gap != 0 || !s.due(at, poll) {
		t.Errorf("an anomaly to confirm: gap %v, due %v; want 0 and due at once", s.gap, s.due(at, poll))
	}
	// Due within half a poll interval of its time: snapshots a poll apart
	// give or take their own duration.
	s = stillness{next: at.Add(4 * poll)}
	if s.due(at.Add(3*poll), poll) || !s.due(at.Add(4*poll-poll/2), poll) {
		t.Errorf("due at 3 s: %v (want false), at 3.5 s: %v (want true)", s.due(at.Add(3*poll), poll), s.due(at.Add(4*poll-poll/2), poll))
	}
}

// TestAwaitingConfirmation: a lock whose anomaly the snapshot before did
// not show is read at the next poll (two reads in a row confirm it); one
// already seen, a herd and an unrecognised child need no second read.
func TestAwaitingConfirmation(t *testing.T) {
	l := Lock{Path: "/l", Entries: []LockEntry{{Node: "n1", Flags: AnomalySet(0).With(AnomalyNoWatch)}}}
	if !awaitingConfirmation(l, map[anomalyKey]bool{}) {
		t.Error("a new missing watch: not awaiting confirmation")
	}
	if awaitingConfirmation(l, map[anomalyKey]bool{{"/l", "n1", AnomalyNoWatch}: true}) {
		t.Error("a missing watch seen before: awaiting confirmation")
	}
	herd := Lock{Path: "/l", Anomalies: []Anomaly{{Kind: AnomalyHerd, Node: "n"}, {Kind: AnomalyUnrecognised, Node: "x"}},
		Entries: []LockEntry{{Node: "n", Flags: AnomalySet(0).With(AnomalyHerd)}}}
	if awaitingConfirmation(herd, map[anomalyKey]bool{}) {
		t.Error("a herd and an unrecognised child: awaiting confirmation")
	}
}
