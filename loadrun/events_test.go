package loadrun

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// drain reads events until the channel closes, failing after a minute.
func drain(t *testing.T, events <-chan Event) []Event {
	t.Helper()
	var got []Event
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-timeout:
			t.Fatalf("events still open after a minute; got %d", len(got))
		}
	}
}

// TestEventsInOrderNeverDropped: each subscriber gets every event in the
// order published, however late it reads (publishing never waits for
// it), intervals only when it asked, and its channel closes after the
// last.
func TestEventsInOrderNeverDropped(t *testing.T) {
	r := &Runner{}
	all := r.Subscribe(context.Background(), WantIntervals)
	plain := r.Subscribe(context.Background(), 0)
	h := r.hub()
	h.publish(EventPlan{Plan: &Plan{Title: "t"}}, 0)
	h.Starting(0, scenarios.Run{}, "")
	const n = 1000 // far more than any buffer: nobody reads yet
	for i := range n {
		h.Progress(loadgen.Progress{Ops: int64(i)})
		h.publish(EventInterval{Run: "r"}, WantIntervals)
	}
	h.Notice("bye")
	h.publish(EventEnded{}, 0)
	r.closeEvents()
	h.Notice("after the end") // goes nowhere

	for _, tt := range []struct {
		name      string
		events    <-chan Event
		intervals int
	}{{"intervals wanted", all, n}, {"plain", plain, 0}} {
		got := drain(t, tt.events)
		if want := 1 + 1 + n + tt.intervals + 1 + 1; len(got) != want {
			t.Fatalf("%s: got %d events, want %d", tt.name, len(got), want)
		}
		if _, ok := got[0].(EventPlan); !ok {
			t.Errorf("%s: first event %T, want EventPlan", tt.name, got[0])
		}
		if _, ok := got[len(got)-1].(EventEnded); !ok {
			t.Errorf("%s: last event %T, want EventEnded", tt.name, got[len(got)-1])
		}
		next, intervals := int64(0), 0
		for _, ev := range got {
			switch ev := ev.(type) {
			case EventProgress:
				if ev.Ops != next {
					t.Fatalf("%s: progress %d after %d: out of order", tt.name, ev.Ops, next-1)
				}
				next++
			case EventInterval:
				intervals++
			}
		}
		if next != n || intervals != tt.intervals {
			t.Errorf("%s: %d progress, %d intervals; want %d and %d", tt.name, next, intervals, n, tt.intervals)
		}
	}
	if got := drain(t, r.Subscribe(context.Background(), 0)); len(got) != 0 {
		t.Errorf("a subscription after the end got %d events, want its channel closed at once", len(got))
	}
}

// TestEventsReaderLeaves: a reader whose ctx ends stops getting events
// and its channel closes; the others go on.
func TestEventsReaderLeaves(t *testing.T) {
	r := &Runner{}
	ctx, cancel := context.WithCancel(context.Background())
	leaving := r.Subscribe(ctx, 0)
	staying := r.Subscribe(context.Background(), 0)
	h := r.hub()
	h.Notice("one")
	if ev := <-leaving; ev.(EventNotice).Line != "one" {
		t.Fatalf("got %v, want notice one", ev)
	}
	cancel()
	for range 100 {
		h.Notice("more")
	}
	drain(t, leaving) // closes: nobody feeds it any more
	r.closeEvents()
	if got := drain(t, staying); len(got) != 101 {
		t.Errorf("the staying reader got %d events, want 101", len(got))
	}
}

// TestEventsOfAFailedRun: a mode call that fails before its runs start
// (no server answers) publishes nothing and closes the channels, so its
// readers end.
func TestEventsOfAFailedRun(t *testing.T) {
	r := &Runner{Target: Target{Server: connstr.ConnectString{Servers: []string{"127.0.0.1:1"}}, Log: &bytes.Buffer{}},
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	events := r.Subscribe(context.Background(), WantDetail)
	plan, err := NewPlan("fair-lock", scenarios.Overrides{Clients: 1, Ops: 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Run(ctx, plan); err == nil {
		t.Fatal("Run on a closed port: no error")
	}
	if got := drain(t, events); len(got) != 0 {
		t.Errorf("got %d events (%T first), want none", len(got), got[0])
	}
}

// TestIntervalValuesCopied: an interval's values are copied out of the
// recorder's histogram, which it reuses once the hook returns.
func TestIntervalValuesCopied(t *testing.T) {
	h := hdrhistogram.NewPacked(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	for _, us := range []int64{100, 100, 5000} {
		_ = h.RecordValue(us)
	}
	values := IntervalValues(&metrics.PhaseInterval{Raw: h, Corrected: h})
	_ = h.RecordValue(100) // the recorder goes on with the histogram
	want := []ValueCount{{100, 2}, {5000, 1}}
	if len(values) != len(want) {
		t.Fatalf("values %v, want %v", values, want)
	}
	for i := range want {
		if values[i].Count != want[i].Count || values[i].Micros < want[i].Micros || values[i].Micros > want[i].Micros*1001/1000 {
			t.Errorf("values[%d] = %v, want %v (within 0.1%%)", i, values[i], want[i])
		}
	}
}
