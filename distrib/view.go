package distrib

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
)

// view is the starter's live view of every process: each progress report
// of its own run is merged with the other processes' last live parts
// (read every LiveEvery), so that its dashboard, progress line and
// metrics endpoint show the whole run while it goes, not only at the end.
// The merged latencies are the processes' histograms summed (exact up to
// each process's last closed interval); counts are summed; figures are
// computed from the summed counts (figures.MergeTotals).
type view struct {
	own *live
	// hook, if set, receives the values each other process recorded
	// since its previous live part, as closed intervals, with the
	// process's label (Options.OnProcessInterval: the metrics endpoint's
	// latencies).
	hook   func(string, metrics.Phase, *metrics.PhaseInterval)
	mu     sync.Mutex
	others map[int]*viewPart // by process
	// lost are the processes whose member node is gone before they
	// published their results.
	lost map[int]bool
}

type viewPart struct {
	part   *Part
	phases map[metrics.Phase][2]*hdrhistogram.Histogram // raw, corrected
}

func newView(own *live, hook func(string, metrics.Phase, *metrics.PhaseInterval)) *view {
	return &view{own: own, hook: hook, others: map[int]*viewPart{}, lost: map[int]bool{}}
}

// poll reads the other processes' live parts every LiveEvery until ctx
// ends; lostSeen is told once of each process found gone.
func (m *Member) pollView(ctx context.Context, step int, v *view, lostSeen func(string)) {
	t := time.NewTicker(LiveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i := 1; i < m.plan.Processes; i++ {
			if p := m.readLive(step, i); p != nil {
				v.set(i, p)
			}
		}
		published, _, _ := m.sess().Conn().Children(m.stepDir(step) + "/parts")
		if lost, err := m.lostOf(published); err == nil {
			for i, mi := range lost {
				if v.markLost(i) && lostSeen != nil {
					lostSeen(fmt.Sprintf("process %d (%s, pid %d) is gone (its session ended): its figures stay at its last live part", i, mi.Host, mi.PID))
				}
			}
		}
	}
}

func (v *view) set(i int, p *Part) {
	vp := &viewPart{part: p, phases: map[metrics.Phase][2]*hdrhistogram.Histogram{}}
	for _, ph := range p.Metrics.Phases {
		raw, err1 := metrics.DecodeHistogram(ph.Raw)
		corr, err2 := metrics.DecodeHistogram(ph.Corrected)
		if err1 != nil || err2 != nil {
			return
		}
		vp.phases[ph.Phase] = [2]*hdrhistogram.Histogram{raw, corr}
	}
	v.mu.Lock()
	prev := v.others[i]
	v.others[i] = vp
	v.mu.Unlock()
	if v.hook == nil {
		return
	}
	for ph, hs := range vp.phases {
		var before *hdrhistogram.Histogram
		if prev != nil {
			before = prev.phases[ph][1]
		}
		if d := since(hs[1], before); d.TotalCount() > 0 {
			v.hook(loadgen.ProcessLabel(p.Host, p.PID), ph, &metrics.PhaseInterval{Raw: d, Corrected: d})
		}
	}
}

// since is what cur, a cumulative histogram, holds beyond before (nil:
// nothing), bucket by bucket.
func since(cur, before *hdrhistogram.Histogram) *hdrhistogram.PackedHistogram {
	d := hdrhistogram.NewPacked(metrics.LowestTrackable, metrics.DefaultHighest.Microseconds(), metrics.SignificantFigures)
	var prev []hdrhistogram.Bar
	if before != nil {
		prev = before.Distribution() // the same geometry: bars align
	}
	for i, b := range cur.Distribution() {
		n := b.Count
		if i < len(prev) && prev[i].From == b.From {
			n -= prev[i].Count
		}
		if n > 0 {
			d.RecordValues(b.From, n)
		}
	}
	return d
}

// markLost reports whether process i was not known lost before.
func (v *view) markLost(i int) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.lost[i] {
		return false
	}
	v.lost[i] = true
	return true
}

// merged is p, this process's progress, with the other processes' last
// live parts added in.
func (v *view) merged(p loadgen.Progress) loadgen.Progress {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.others) == 0 {
		return p
	}
	out := p
	out.PerProcess = v.perProcess(p, 0) // the starter's view
	out.ErrorsByKind = maps.Clone(p.ErrorsByKind)
	counts := loadgen.ViolationCounts(p.Checks)
	out.Violations = slices.Clone(p.Violations)
	totals := []figures.Totals{p.Totals}
	for _, i := range slices.Sorted(maps.Keys(v.others)) {
		o := v.others[i].part
		out.Ops += o.Ops
		out.Errors += o.Metrics.Counts.Errors
		for k, n := range o.Metrics.Counts.ErrorsByKind {
			if out.ErrorsByKind == nil {
				out.ErrorsByKind = map[string]int64{}
			}
			out.ErrorsByKind[k] += n
		}
		if f := o.Now; f != nil {
			out.Clients += f.Clients
			out.SessionsAlive += f.SessionsAlive
			out.SessionsConnected += f.SessionsConnected
			out.RampOps += f.RampOps
			if !v.lost[i] {
				out.Rate += f.Rate
			}
			for k, n := range f.ViolationCounts {
				counts[k] += n
			}
		}
		for _, line := range o.Checks.Violations {
			out.Violations = append(out.Violations, fmt.Sprintf("process %d: %s", i, line))
		}
		totals = append(totals, o.Totals)
	}
	out.Totals = figures.MergeTotals(totals...)
	out.Checks = loadgen.LiveChecks(counts)
	// Latencies: every process's histograms summed, phase by phase.
	v.own.mu.Lock()
	phases := map[metrics.Phase][2]*hdrhistogram.Histogram{}
	add := func(ph metrics.Phase, raw, corr *hdrhistogram.Histogram) {
		cur, ok := phases[ph]
		if !ok {
			cur = [2]*hdrhistogram.Histogram{newHistogram(), newHistogram()}
			phases[ph] = cur
		}
		cur[0].Merge(raw)
		cur[1].Merge(corr)
	}
	for ph, t := range v.own.phases {
		add(ph, t.raw, t.corrected)
	}
	v.own.mu.Unlock()
	for _, o := range v.others {
		for ph, hs := range o.phases {
			add(ph, hs[0], hs[1])
		}
	}
	if len(p.Phases) > 0 {
		out.Phases = maps.Clone(p.Phases)
	}
	for ph, hs := range phases {
		s := metrics.Summarize(hs[0], hs[1])
		if ph == p.MainPhase {
			out.Main = s
		}
		if out.Phases != nil {
			out.Phases[ph] = s
		}
	}
	return out
}

// perProcess is each process's own figures: p, this process's, and the
// others' from their last live parts (figures up to that part: a lost
// process's stay at its last one). Under v.mu.
func (v *view) perProcess(p loadgen.Progress, p0 int) []loadgen.ProcessProgress {
	host, _ := os.Hostname()
	own := p
	own.PerProcess = nil
	out := []loadgen.ProcessProgress{{Label: loadgen.ProcessLabel(host, os.Getpid()), Progress: own}}
	for _, i := range slices.Sorted(maps.Keys(v.others)) {
		o := v.others[i].part
		// Run ids are "<run>.<step>.p<index>" (Step).
		runID := strings.TrimSuffix(p.RunID, fmt.Sprintf(".p%d", p0)) + fmt.Sprintf(".p%d", i)
		q := loadgen.Progress{Name: p.Name, Recipe: p.Recipe, RunID: runID, State: p.State, MainPhase: p.MainPhase,
			Ops: o.Ops, Errors: o.Metrics.Counts.Errors, ErrorsByKind: o.Metrics.Counts.ErrorsByKind, Totals: o.Totals}
		if f := o.Now; f != nil {
			q.Clients, q.SessionsAlive, q.SessionsConnected, q.RampOps = f.Clients, f.SessionsAlive, f.SessionsConnected, f.RampOps
			if !v.lost[i] {
				q.Rate = f.Rate
			}
			q.Checks = loadgen.LiveChecks(f.ViolationCounts)
		}
		out = append(out, loadgen.ProcessProgress{Label: loadgen.ProcessLabel(o.Host, o.PID), Progress: q})
	}
	return out
}
