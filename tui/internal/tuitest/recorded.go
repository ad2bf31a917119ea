package tuitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
	"github.com/zkherd/zkherd/tui/loadview"
)

// A Recording is what a real load run sent the dashboard: the plan's runs
// and every progress the generator reported, with when. Recordings are made
// by TestRecord (go test -run TestRecord ./tui/internal/tuitest -args -record)
// against a real ensemble, and replayed through the dashboard's own feed
// (loadview.Feed), so the load goldens are drawn from what the product
// computes, not from data made up to look like it.
type Recording struct {
	Title string
	Runs  []scenarios.Run
	Start time.Time
	Steps []Step
}

// Step is one thing the feed was told.
type Step struct {
	At       time.Time
	Starting int               `json:",omitempty"` // run index + 1
	Progress *loadgen.Progress `json:",omitempty"`
}

// Recorded replays the recording testdata/name.jsonl through a
// loadview.Feed up to the fraction upTo of its steps (1: all) and returns
// the last snapshot.
func Recorded(t testing.TB, name string, upTo float64) *loadview.Snapshot {
	t.Helper()
	rec := ReadRecording(t, name)
	var now time.Time
	f := loadview.NewFeedAt(rec.Start, rec.Title, "127.0.0.1:2181", "", rec.Runs)
	f.Now = func() time.Time { return now }
	var snap loadview.Snapshot
	n := int(float64(len(rec.Steps)) * upTo)
	for _, s := range rec.Steps[:max(n, 1)] {
		now = s.At
		switch {
		case s.Progress != nil:
			snap = f.Progress(*s.Progress)
		case s.Starting > 0:
			snap = f.Starting(s.Starting - 1)
		}
	}
	snap.Server = "127.0.0.1:2181"
	return &snap
}

// ReadRecording reads testdata/name.jsonl: the recording's header, then
// one step per line.
func ReadRecording(t testing.TB, name string) *Recording {
	t.Helper()
	data, err := fixtures.ReadFile("testdata/" + name + ".jsonl")
	if err != nil {
		t.Fatalf("recording %s: %v (make it with: go test -run TestRecord ./tui/internal/tuitest -args -record)", name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	var rec Recording
	for first := true; sc.Scan(); first = false {
		if first {
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("recording %s: header: %v", name, err)
			}
			continue
		}
		var s Step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("recording %s: %v", name, err)
		}
		rec.Steps = append(rec.Steps, s)
	}
	return &rec
}
