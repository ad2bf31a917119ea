package distrib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
)

// While its run goes, each process publishes a live part every
// LiveEvery under steps/<k>/live/p-<n>: what it measured so far, its
// histograms summed from the closed intervals. The node is persistent:
// a process that dies (kill -9) leaves its last live part, which the
// starter merges in its place, its clients' figures up to that moment.
// Cost: one write of a few KiB per process every LiveEvery on the
// coordinating servers.

// LiveEvery is how often a process publishes its live part.
const LiveEvery = 2 * time.Second

// live accumulates one process's figures while its run goes. The
// interval hook and the progress callback feed it (each from one
// goroutine of loadgen's); the publisher reads it.
type live struct {
	mu     sync.Mutex
	phases map[metrics.Phase]*liveTotal
	order  []metrics.Phase
	prog   loadgen.Progress
	seen   bool
}

type liveTotal struct {
	raw, corrected *hdrhistogram.Histogram
	hasCorrection  bool
	anomalies      metrics.Anomalies
}

func newLive() *live { return &live{phases: map[metrics.Phase]*liveTotal{}} }

// interval adds a phase's closed interval to the totals.
func (l *live) interval(p metrics.Phase, iv *metrics.PhaseInterval) {
	if iv == nil || iv.Raw == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.phases[p]
	if !ok {
		// The range of the run's own histograms (loadgen keeps
		// metrics' default), so that the live totals merge exactly.
		t = &liveTotal{raw: newHistogram(), corrected: newHistogram()}
		l.phases[p] = t
		l.order = append(l.order, p)
	}
	iv.Raw.MergeInto(t.raw)
	if iv.Corrected != nil {
		iv.Corrected.MergeInto(t.corrected)
	}
	t.hasCorrection = t.hasCorrection || iv.HasCorrection
	t.anomalies.OverRange += iv.OverRange
	t.anomalies.Negative += iv.Negative
}

// progress keeps the run's latest progress report.
func (l *live) progress(p loadgen.Progress) {
	l.mu.Lock()
	l.prog, l.seen = p, true
	l.mu.Unlock()
}

// part is the live part: this process's figures so far.
func (l *live) part(index int) (*Part, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	host, _ := os.Hostname()
	p := &Part{Process: index, Host: host, PID: os.Getpid(), Live: true, At: time.Now().UTC(), Partial: true,
		Ops: l.prog.Ops, Totals: l.prog.Totals}
	p.Checks.Violations = l.prog.Violations
	p.Now = &LiveFigures{Clients: l.prog.Clients, SessionsAlive: l.prog.SessionsAlive, SessionsConnected: l.prog.SessionsConnected,
		RampOps: l.prog.RampOps, Rate: l.prog.Rate, ViolationCounts: loadgen.ViolationCounts(l.prog.Checks)}
	// Leftovers: the starter looks at the shared namespace for every
	// process once all are done or gone.
	p.Events = l.prog.Faults
	now := time.Now()
	p.Start = now.Add(-l.prog.Elapsed)
	p.WindowStart = now.Add(-l.prog.Window)
	p.Stop = now
	p.Metrics = PartMetrics{Start: p.Start, End: now,
		Counts: metrics.Counts{Ops: l.prog.Ops, Errors: l.prog.Errors, ErrorsByKind: l.prog.ErrorsByKind}}
	for _, ph := range l.order {
		t := l.phases[ph]
		raw, err := metrics.EncodeHistogram(t.raw)
		if err != nil {
			return nil, err
		}
		corr, err := metrics.EncodeHistogram(t.corrected)
		if err != nil {
			return nil, err
		}
		p.Metrics.Phases = append(p.Metrics.Phases, PartPhase{Phase: ph, Raw: raw, Corrected: corr, HasCorrection: t.hasCorrection, Anomalies: t.anomalies})
	}
	return p, nil
}

// liveNode is process index's live part of run step.
func (m *Member) liveNode(step, index int) string {
	return fmt.Sprintf("%s/live/p-%03d", m.stepDir(step), index)
}

// publishLive writes l's part every LiveEvery until ctx ends.
func (m *Member) publishLive(ctx context.Context, step int, l *live) {
	conn := m.sess().Conn()
	node := m.liveNode(step, m.index)
	t := time.NewTicker(LiveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p, err := l.part(m.index)
		if err != nil {
			continue
		}
		data, err := json.Marshal(p)
		if err != nil || len(data) > maxPartSize {
			continue
		}
		if _, err := conn.Set(node, data, -1); errors.Is(err, zk.ErrNoNode) {
			conn.Create(node, data, 0, zk.WorldACL(zk.PermAll))
		}
	}
}

// readLive reads process index's last live part of step; nil when it
// published none.
func (m *Member) readLive(step, index int) *Part {
	data, _, err := m.sess().Conn().Get(m.liveNode(step, index))
	if err != nil {
		return nil
	}
	var p Part
	if json.Unmarshal(data, &p) != nil {
		return nil
	}
	return &p
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(metrics.LowestTrackable, metrics.DefaultHighest.Microseconds(), metrics.SignificantFigures)
}
