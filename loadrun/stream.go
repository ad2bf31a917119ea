package loadrun

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
)

// StreamSink writes one JSON object per progress report (once a second)
// on its writer, each in one write, so that a run's progress survives a
// crash of zkherd and can be piped into jq while it goes (`--stream`).
// It reads a subscription (Consume): it sees what the dashboard sees.
type StreamSink struct {
	mu    sync.Mutex
	w     io.Writer
	err   error // the first write error; later lines are not attempted
	lines int   // lines written
}

// NewStreamSink returns a StreamSink writing to w. Give it an unbuffered
// writer (a file, stdout): each line is written as it is made.
func NewStreamSink(w io.Writer) *StreamSink { return &StreamSink{w: w} }

// StreamLine is one line of the stream: the dashboard's figures at one
// moment. Latencies are milliseconds; a figure not known yet is null.
type StreamLine struct {
	Time              time.Time `json:"time"`
	RunID             string    `json:"run_id"`
	Scenario          string    `json:"scenario"`
	Recipe            string    `json:"recipe"`
	State             string    `json:"state"`
	ElapsedS          float64   `json:"elapsed_s"`
	WindowS           float64   `json:"window_s"`
	Clients           int       `json:"clients"`
	SessionsAlive     int       `json:"sessions_alive"`
	SessionsConnected int       `json:"sessions_connected"`
	// Operations counts the window's operations once it has opened,
	// RampOperations the ramp-up's (the run's are the two added).
	Operations     int64            `json:"operations"`
	RampOperations int64            `json:"ramp_operations"`
	RatePerS       float64          `json:"rate_per_s"`
	Errors         int64            `json:"errors"`
	ErrorsByKind   map[string]int64 `json:"errors_by_kind"`
	Phase          string           `json:"phase"`
	LatencyMs      *StreamLatency   `json:"latency_ms"`
	// Figures are the figures table's (package figures) that apply to the
	// recipe, by report.json key, null while not known.
	Figures         map[string]*float64 `json:"figures"`
	QueueDepth      *int64              `json:"queue_depth,omitempty"`
	Violations      []string            `json:"violations"`
	ViolationCounts map[string]int64    `json:"violation_counts"`
}

// StreamLatency is the main phase's latency so far.
type StreamLatency struct {
	Count int64   `json:"count"`
	P50ms float64 `json:"p50"`
	P99ms float64 `json:"p99"`
	MaxMs float64 `json:"max"`
}

// NewStreamLine turns a progress report into a stream line.
func NewStreamLine(now time.Time, p loadgen.Progress) StreamLine {
	l := StreamLine{
		Time: now.UTC(), RunID: p.RunID, Scenario: p.Name, Recipe: string(p.Recipe), State: p.State,
		ElapsedS: p.Elapsed.Seconds(), WindowS: p.Window.Seconds(), Clients: p.Clients,
		SessionsAlive: p.SessionsAlive, SessionsConnected: p.SessionsConnected,
		Operations: p.Ops, RampOperations: p.RampOps, RatePerS: p.Rate, Errors: p.Errors, ErrorsByKind: p.ErrorsByKind,
		Phase: string(p.MainPhase), Violations: p.Violations, ViolationCounts: loadgen.ViolationCounts(p.Checks),
	}
	if l.ErrorsByKind == nil {
		l.ErrorsByKind = map[string]int64{}
	}
	if l.Violations == nil {
		l.Violations = []string{}
	}
	if s := p.Main; s.Count > 0 {
		l.LatencyMs = &StreamLatency{Count: s.Count, P50ms: s.CorrectedP50, P99ms: s.CorrectedP99, MaxMs: s.CorrectedMax}
	}
	l.Figures = map[string]*float64{}
	for _, f := range figures.For(p.Recipe.Figures()) {
		if v, ok := f.Value(p.Totals); ok && !math.IsNaN(v) {
			l.Figures[f.Key] = &v
		} else {
			l.Figures[f.Key] = nil
		}
	}
	if p.Recipe.Spec().Items {
		d := p.QueueDepth
		l.QueueDepth = &d
	}
	return l
}

// Consume writes a line for every progress report of events until they
// end.
func (s *StreamSink) Consume(events <-chan Event) {
	for ev := range events {
		if p, ok := ev.(EventProgress); ok {
			s.progress(p.Progress)
		}
	}
}

// progress writes the report as one line.
func (s *StreamSink) progress(p loadgen.Progress) {
	b, err := json.Marshal(NewStreamLine(time.Now(), p))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if err == nil {
		_, err = s.w.Write(append(b, '\n'))
	}
	if err == nil {
		s.lines++
	}
	if err != nil {
		s.err = fmt.Errorf("loadrun: %w", err)
	}
}

// Lines is how many lines were written.
func (s *StreamSink) Lines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines
}

// Err is the first write error, after which the stream stopped.
func (s *StreamSink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
