package loadrun

import (
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// IntervalSink is a Sink that also records every phase's closed interval
// of run (loadgen.Options.OnInterval): the metrics endpoint's latency
// histograms take the very values the report's HdrHistograms hold.
type IntervalSink interface {
	Sink
	Interval(run string, p metrics.Phase, pi *metrics.PhaseInterval)
}

// tee hands what a run says to the display's sink and to every tap (the
// metrics endpoint, the JSON stream): data flows one way, from the run to
// each of them, and none of them can change what the others see.
type tee struct {
	display Sink
	taps    []Sink
}

func (t tee) Starting(i int, run scenarios.Run, line string) {
	t.display.Starting(i, run, line)
	for _, s := range t.taps {
		s.Starting(i, run, line)
	}
}

func (t tee) Progress(p loadgen.Progress) {
	t.display.Progress(p)
	for _, s := range t.taps {
		s.Progress(p)
	}
}

func (t tee) Notice(line string) {
	t.display.Notice(line)
	for _, s := range t.taps {
		s.Notice(line)
	}
}

// LiveDetail is the display's: the taps read only what every progress
// carries.
func (t tee) LiveDetail() bool {
	d, ok := t.display.(DetailSink)
	return ok && d.LiveDetail()
}

// intervalHook returns the OnInterval of run name for the taps that record
// intervals, nil when none does.
func (t tee) intervalHook(name string) func(metrics.Phase, *metrics.PhaseInterval) {
	var rec []IntervalSink
	for _, s := range t.taps {
		if is, ok := s.(IntervalSink); ok {
			rec = append(rec, is)
		}
	}
	if len(rec) == 0 {
		return nil
	}
	return func(p metrics.Phase, pi *metrics.PhaseInterval) {
		for _, s := range rec {
			s.Interval(name, p, pi)
		}
	}
}
