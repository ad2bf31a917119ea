package distrib

import (
	"fmt"
	"os"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
)

// Part is one process's results for one run, as it publishes them: small
// enough for a znode (each histogram is a few hundred bytes to a few KiB
// compressed).
type Part struct {
	// Process is the process's number in the run, from 0 (the starter).
	Process int    `json:"process"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	// Error, when set, is why the process's run failed: its part has
	// nothing else.
	Error string `json:"error,omitempty"`
	// Live marks a live part (published while the run goes, up to At);
	// Lost one the starter merged in place of a process that died.
	Live bool      `json:"live,omitempty"`
	At   time.Time `json:"at,omitzero"`
	Lost bool      `json:"lost,omitempty"`
	// CoordRequests counts the requests the process's coordination sent
	// up to this part; -1 when not counted.
	CoordRequests int64 `json:"coord_requests"`
	// Now, in a live part, is what the process's last progress report
	// said of the moment (the starter's live view adds them up).
	Now *LiveFigures `json:"now,omitempty"`

	Start       time.Time `json:"start"`
	WindowStart time.Time `json:"window_start"`
	Stop        time.Time `json:"stop"`
	Partial     bool      `json:"partial"`
	Ops         int64     `json:"ops"`
	Releases    int64     `json:"releases"`
	SourceAddrs int       `json:"source_addrs"`

	Requests map[string]int64 `json:"requests,omitempty"`
	// Totals are the process's raw counts (figures.Counts); MntrError
	// says why its server counts are missing.
	Totals    figures.Totals   `json:"totals"`
	MntrError string           `json:"mntr_error,omitempty"`
	Checks    loadgen.Checks   `json:"checks"`
	Events    []loadgen.Event  `json:"events,omitempty"`
	Notes     []string         `json:"notes,omitempty"`
	Fencing   *loadgen.Fencing `json:"fencing,omitempty"`
	// Lock is the process's wait graph (its own clients only).
	Lock *loadgen.WaitGraph `json:"lock,omitempty"`
	// Linearizability is the oracle's check of this process's history.
	Linearizability *oracle.Result `json:"linearizability,omitempty"`
	// History is this process's history, for a check of every process's
	// together; nil when it was too large to ship (HistoryNote says so).
	History     *PartHistory `json:"history,omitempty"`
	HistoryNote string       `json:"history_note,omitempty"`
	// QueueItems is the process's queue ledger (queue runs).
	QueueItems *loadgen.QueueLedger `json:"queue_items,omitempty"`

	Metrics PartMetrics `json:"metrics"`
}

// PartMetrics is a metrics.Result in a form that travels: each phase's
// totals as compressed histograms.
type PartMetrics struct {
	Start        time.Time               `json:"start"`
	End          time.Time               `json:"end"`
	Highest      time.Duration           `json:"highest"`
	Counts       metrics.Counts          `json:"counts"`
	Phases       []PartPhase             `json:"phases"`
	Intervals    []metrics.IntervalStats `json:"intervals"`
	UnknownPhase int64                   `json:"unknown_phase"`
}

// PartPhase is one phase's totals.
type PartPhase struct {
	Phase metrics.Phase `json:"phase"`
	// Raw and Corrected are HdrHistogram V2 encodings (metrics.EncodeHistogram).
	Raw           string            `json:"raw"`
	Corrected     string            `json:"corrected"`
	HasCorrection bool              `json:"has_correction"`
	Anomalies     metrics.Anomalies `json:"anomalies"`
}

// FromResult makes process n's Part from its run's result.
func FromResult(n int, res *loadgen.Result) (_ *Part, err error) {
	defer marked(&err)
	host, _ := os.Hostname()
	p := &Part{
		Process: n, Host: host, PID: os.Getpid(),
		Start: res.Start, WindowStart: res.WindowStart, Stop: res.Stop, Partial: res.Partial,
		Ops: res.Ops, Releases: res.Releases, SourceAddrs: res.SourceAddrs,
		Requests: res.Requests, Totals: res.Totals, MntrError: res.MntrError, Checks: res.Checks, Events: res.Events,
		Notes: res.Notes, Fencing: res.Fencing, Lock: res.Lock, Linearizability: res.Linearizability,
		QueueItems: res.QueueItems,
	}
	if h := res.History; h != nil {
		ops, err := oracle.EncodeOps(h.Ops)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		if len(ops) > maxHistorySize {
			p.HistoryNote = fmt.Sprintf("process %d's history (%d operations, %d KiB compressed) is too large to ship through a znode (at most %d KiB)", n, len(h.Ops), len(ops)>>10, maxHistorySize>>10)
		} else {
			p.History = &PartHistory{Model: h.Model, Limit: h.Limit, Partitions: h.Partitions, Ops: ops, Dropped: h.Dropped, Start: h.Start}
		}
	}
	m := res.Metrics
	if m == nil {
		return p, nil
	}
	p.Metrics = PartMetrics{Start: m.Start, End: m.End, Highest: m.Highest, Counts: m.Counts,
		Intervals: m.Intervals, UnknownPhase: m.UnknownPhase}
	for _, ph := range m.Phases {
		t := m.Totals[ph]
		raw, err := metrics.EncodeHistogram(t.Raw)
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", ph, err)
		}
		corr, err := metrics.EncodeHistogram(t.Corrected)
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", ph, err)
		}
		p.Metrics.Phases = append(p.Metrics.Phases, PartPhase{Phase: ph, Raw: raw, Corrected: corr,
			HasCorrection: t.HasCorrection, Anomalies: t.Anomalies})
	}
	return p, nil
}

// decode turns the part's histograms back into a metrics.Result (without
// interval logs).
func (pm PartMetrics) decode() (*metrics.Result, error) {
	r := &metrics.Result{Start: pm.Start, End: pm.End, Highest: pm.Highest, Counts: pm.Counts,
		Intervals: pm.Intervals, UnknownPhase: pm.UnknownPhase, Totals: map[metrics.Phase]*metrics.PhaseTotal{}}
	for _, ph := range pm.Phases {
		raw, err := metrics.DecodeHistogram(ph.Raw)
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", ph.Phase, err)
		}
		corr, err := metrics.DecodeHistogram(ph.Corrected)
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", ph.Phase, err)
		}
		r.Phases = append(r.Phases, ph.Phase)
		r.Totals[ph.Phase] = &metrics.PhaseTotal{Raw: raw, Corrected: corr, HasCorrection: ph.HasCorrection, Anomalies: ph.Anomalies}
	}
	return r, nil
}

// newLike returns an empty histogram with h's range and precision.
func newLike(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	return hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
}

// PartHistory is a process's history in a form that travels
// (oracle.EncodeOps).
type PartHistory struct {
	Model      string    `json:"model"`
	Limit      int       `json:"limit"`
	Partitions []string  `json:"partitions"`
	Ops        string    `json:"ops"`
	Dropped    int64     `json:"dropped"`
	Start      time.Time `json:"start"`
}

// maxHistorySize bounds the history a Part carries, leaving room in the
// znode for the rest (maxPartSize).
const maxHistorySize = 640 << 10

func (ph *PartHistory) decode() (*oracle.History, error) {
	ops, err := oracle.DecodeOps(ph.Ops)
	if err != nil {
		return nil, err
	}
	return &oracle.History{Model: ph.Model, Limit: ph.Limit, Partitions: ph.Partitions, Ops: ops, Dropped: ph.Dropped, Start: ph.Start}, nil
}

// LiveFigures are a live part's figures of the moment.
type LiveFigures struct {
	Clients           int              `json:"clients"`
	SessionsAlive     int              `json:"sessions_alive"`
	SessionsConnected int              `json:"sessions_connected"`
	RampOps           int64            `json:"ramp_ops"`
	Rate              float64          `json:"rate"`
	ViolationCounts   map[string]int64 `json:"violation_counts,omitempty"`
}
