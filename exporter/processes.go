package exporter

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/scenarios"
)

// Loads is a run's metrics by process: one Load (one set of series) per
// process label. A distributed run's starter reports each process's own
// figures (loadgen.Progress.PerProcess) and latencies
// (loadrun.EventInterval.Process): its endpoint serves them labelled
// process="host:pid", so that a sum over process is the whole run and
// no series counts a process twice (a Prometheus user sums; a series of
// the whole run labelled with one process would be counted again by a
// sum). Events that name no process are this process's, labelled own
// ("": no label, a run of one process).
//
// The checks a distributed run makes only at its end (across processes)
// belong to no process: they are in the starter's report, not here.
type Loads struct {
	reg prometheus.Registerer
	own string

	mu         sync.Mutex
	by         map[string]*Load
	runs       []scenarios.Run // started so far, for a process seen later
	perProcess bool            // a progress named its processes
}

// NewLoads returns the Loads registered with reg, this process's labelled
// own.
func NewLoads(reg prometheus.Registerer, own string) (*Loads, error) {
	ls := &Loads{reg: reg, own: own, by: map[string]*Load{}}
	if _, err := ls.load(own); err != nil {
		return nil, err
	}
	return ls, nil
}

// load is the Load of process label, registered at its first use.
func (ls *Loads) load(label string) (*Load, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.by[label]; l != nil {
		return l, nil
	}
	r := ls.reg
	if label != "" {
		r = prometheus.WrapRegistererWith(prometheus.Labels{"process": label}, ls.reg)
	}
	l, err := NewLoad(r)
	if err != nil {
		return nil, err
	}
	for _, run := range ls.runs {
		l.starting(run)
	}
	ls.by[label] = l
	return l, nil
}

// Consume takes the events of a run until they end.
func (ls *Loads) Consume(events <-chan loadrun.Event) {
	for ev := range events {
		ls.apply(ev)
	}
}

func (ls *Loads) apply(ev loadrun.Event) {
	switch ev := ev.(type) {
	case loadrun.EventStarting:
		ls.mu.Lock()
		ls.runs = append(ls.runs, ev.Run)
		loads := make([]*Load, 0, len(ls.by))
		for _, l := range ls.by {
			loads = append(loads, l)
		}
		ls.mu.Unlock()
		for _, l := range loads {
			l.apply(ev)
		}
	case loadrun.EventProgress:
		if len(ev.PerProcess) == 0 {
			ls.apply1(ls.own, ev)
			return
		}
		ls.mu.Lock()
		ls.perProcess = true
		ls.mu.Unlock()
		for _, pp := range ev.PerProcess {
			if l, err := ls.load(pp.Label); err == nil {
				l.progress(pp.Progress)
			}
		}
	case loadrun.EventInterval:
		label := ev.Process
		if label == "" {
			label = ls.own
		}
		ls.apply1(label, ev)
	case loadrun.EventEnded:
		ls.mu.Lock()
		merged := ls.perProcess
		ls.mu.Unlock()
		if !merged { // a merged result is the whole run's, no process's
			ls.apply1(ls.own, ev)
		}
	}
}

func (ls *Loads) apply1(label string, ev loadrun.Event) {
	if l, err := ls.load(label); err == nil {
		l.apply(ev)
	}
}

// Started reports whether a scenario started (a scrape has something to
// read).
func (ls *Loads) Started() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.runs) > 0
}
