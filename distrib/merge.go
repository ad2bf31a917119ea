package distrib

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/scenarios"
)

// ErrNoParts is returned by Merge without any part.
var ErrNoParts = errors.New("no results to merge")

// Merge merges the parts of one run into one result, as if one process had
// run every client:
//   - each phase's histograms exactly: the merged histogram holds the sum
//     of the parts' counts in every bucket (raw and corrected alike);
//   - operations, releases, errors, wake-ups, requests and sessions by
//     adding them up, interval by interval (the processes started together
//     at a barrier, so their n-th intervals cover the same second);
//     an interval's latency percentiles are the highest of the parts'
//     (percentiles of a merged interval are not kept; the totals are);
//   - server packets and watch fan-out, which every process measured on
//     the servers for everyone's traffic over the same window, from the
//     part that saw the most;
//   - the checks by adding up the violations, each line naming its
//     process;
//   - the lock's wait graph from the first process (its clients only: a
//     graph is a moment, not a sum).
//
// The merged result has no interval logs (.hlog files): they stay with
// each process.
func Merge(run scenarios.Run, runID, ns string, parts []*Part) (_ *loadgen.Result, err error) {
	defer marked(&err)
	if len(parts) == 0 {
		return nil, ErrNoParts
	}
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b *Part) int { return a.Process - b.Process })
	res := &loadgen.Result{Run: run, RunID: runID, Namespace: ns, Requests: map[string]int64{}}
	res.Run.Clients = run.Clients * len(parts) // every process ran the run's clients
	var ms []*metrics.Result
	var (
		fencing []*loadgen.Fencing
		lins    []*oracle.Result
		tags    []string
	)
	for i, p := range parts {
		if i == 0 || p.Start.Before(res.Start) {
			res.Start = p.Start
		}
		if i == 0 || (!p.WindowStart.IsZero() && p.WindowStart.Before(res.WindowStart)) {
			res.WindowStart = p.WindowStart
		}
		if p.Stop.After(res.Stop) {
			res.Stop = p.Stop
		}
		res.Partial = res.Partial || p.Partial
		res.Ops += p.Ops
		res.Releases += p.Releases
		res.SourceAddrs = max(res.SourceAddrs, p.SourceAddrs)
		for k, n := range p.Requests {
			res.Requests[k] += n
		}
		tag := fmt.Sprintf("process %d: ", p.Process)
		for _, e := range p.Events {
			e.Detail = tag + e.Detail
			res.Events = append(res.Events, e)
		}
		for _, n := range p.Notes {
			res.Notes = append(res.Notes, tag+n)
		}
		mergeChecks(&res.Checks, p.Checks, tag)
		lins, tags = append(lins, p.Linearizability), append(tags, tag)
		if p.Fencing != nil {
			fencing = append(fencing, p.Fencing)
		}

		m, err := p.Metrics.decode()
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", p.Process, err)
		}
		ms = append(ms, m)
	}
	slices.SortStableFunc(res.Events, func(a, b loadgen.Event) int { return a.At.Compare(b.At) })
	res.Checks.Passed = len(res.Checks.Violations) == 0 && len(res.Checks.NotChecked) == 0
	res.Fencing = mergeFencing(fencing)
	res.Linearizability = oracle.Merge(lins, tags)
	m, err := MergeMetrics(ms)
	if err != nil {
		return nil, err
	}
	res.Metrics = m
	if w := res.Stop.Sub(res.WindowStart).Seconds(); w > 0 {
		res.Throughput = float64(res.Ops) / w
	}
	res.Totals, res.MntrError = mergeTotals(parts)
	// A wait graph is not summed: the first process's stands for the run,
	// its own clients only.
	res.Lock = parts[0].Lock
	return res, nil
}

func mergeChecks(dst *loadgen.Checks, c loadgen.Checks, tag string) {
	dst.MutualExclusionViolations += c.MutualExclusionViolations
	dst.FencingViolations += c.FencingViolations
	dst.FIFOBypasses += c.FIFOBypasses
	dst.MaxBypass = max(dst.MaxBypass, c.MaxBypass)
	dst.FIFOChecked = dst.FIFOChecked || c.FIFOChecked
	dst.SemaphoreOverIssued += c.SemaphoreOverIssued
	dst.DoubleLeaders += c.DoubleLeaders
	dst.LostItems += c.LostItems
	dst.DuplicateItems += c.DuplicateItems
	dst.Unconsumed += c.Unconsumed
	dst.ForeignDeletedItems += c.ForeignDeletedItems
	dst.ForeignGrants += c.ForeignGrants
	dst.ForeignRacedGrants += c.ForeignRacedGrants
	dst.ForeignExcusedOverlaps += c.ForeignExcusedOverlaps
	dst.ForeignDeletedHolders += c.ForeignDeletedHolders
	dst.LostGrants += c.LostGrants
	dst.LostGrantsReported += c.LostGrantsReported
	if dst.LeftoverZnodes >= 0 && c.LeftoverZnodes >= 0 {
		dst.LeftoverZnodes += c.LeftoverZnodes
	} else {
		dst.LeftoverZnodes = -1 // a part could not look: not checked
	}
	dst.LeftoverPaths = append(dst.LeftoverPaths, c.LeftoverPaths...)
	for _, v := range c.Violations {
		dst.Violations = append(dst.Violations, tag+v)
	}
	for _, v := range c.NotChecked {
		dst.NotChecked = append(dst.NotChecked, tag+v)
	}
	for _, v := range c.Warnings {
		dst.Warnings = append(dst.Warnings, tag+v)
	}
}

func mergeFencing(fs []*loadgen.Fencing) *loadgen.Fencing {
	if len(fs) == 0 {
		return nil
	}
	out := &loadgen.Fencing{}
	for _, f := range fs {
		out.Writes += f.Writes
		out.Rejected += f.Rejected
		out.WriteErrors += f.WriteErrors
		out.OverlapCount += f.OverlapCount
		out.IgnoreLost = out.IgnoreLost || f.IgnoreLost
		out.Overlaps = append(out.Overlaps, f.Overlaps...)
	}
	slices.SortStableFunc(out.Overlaps, func(a, b loadgen.Overlap) int { return a.At.Compare(b.At) })
	return out
}

// mergeTotals combines the parts' counts, each by its rule
// (figures.MergeTotals), and says which process could not read the servers.
func mergeTotals(parts []*Part) (figures.Totals, string) {
	ts := make([]figures.Totals, len(parts))
	var mntrErr string
	for i, p := range parts {
		ts[i] = p.Totals
		if p.MntrError != "" {
			mntrErr = fmt.Sprintf("process %d: %s", p.Process, p.MntrError)
		}
	}
	return figures.MergeTotals(ts...), mntrErr
}

// MergeMetrics merges results recorded by several processes (see Merge).
// Histograms of different ranges cannot be merged exactly: that is an
// error, not a silent loss.
func MergeMetrics(rs []*metrics.Result) (_ *metrics.Result, err error) {
	defer marked(&err)
	if len(rs) == 0 {
		return nil, ErrNoParts
	}
	out := &metrics.Result{Start: rs[0].Start, End: rs[0].End, Highest: rs[0].Highest,
		Totals: map[metrics.Phase]*metrics.PhaseTotal{}}
	for _, r := range rs {
		if r.Start.Before(out.Start) {
			out.Start = r.Start
		}
		if r.End.After(out.End) {
			out.End = r.End
		}
		out.Highest = max(out.Highest, r.Highest)
		out.Counts = addCounts(out.Counts, r.Counts)
		out.UnknownPhase += r.UnknownPhase
		for _, p := range r.Phases {
			t := r.Totals[p]
			dst, ok := out.Totals[p]
			if !ok {
				dst = &metrics.PhaseTotal{Raw: newLike(t.Raw), Corrected: newLike(t.Corrected)}
				out.Totals[p] = dst
			}
			if n := dst.Raw.Merge(t.Raw); n != 0 {
				return nil, fmt.Errorf("phase %s: %d raw values outside the merged histogram's range", p, n)
			}
			if n := dst.Corrected.Merge(t.Corrected); n != 0 {
				return nil, fmt.Errorf("phase %s: %d corrected values outside the merged histogram's range", p, n)
			}
			dst.HasCorrection = dst.HasCorrection || t.HasCorrection
			dst.Anomalies = addAnomalies(dst.Anomalies, t.Anomalies)
		}
		for i, iv := range r.Intervals {
			if i == len(out.Intervals) {
				out.Intervals = append(out.Intervals, metrics.IntervalStats{Start: iv.Start, End: iv.End, Phases: map[metrics.Phase]metrics.PhasePoint{}})
			}
			mergeInterval(&out.Intervals[i], iv)
		}
	}
	out.Phases = append(out.Phases, allPhases(out.Totals)...)
	return out, nil
}

// allPhases orders phases as metrics.Phases does, others after by name.
func allPhases(totals map[metrics.Phase]*metrics.PhaseTotal) []metrics.Phase {
	var out []metrics.Phase
	for _, p := range metrics.Phases() {
		if _, ok := totals[p]; ok {
			out = append(out, p)
		}
	}
	var extra []metrics.Phase
	for p := range totals {
		if !slices.Contains(out, p) {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

func addCounts(a, b metrics.Counts) metrics.Counts {
	out := metrics.Counts{
		Ops: a.Ops + b.Ops, Errors: a.Errors + b.Errors, Wakeups: a.Wakeups + b.Wakeups,
		ZKRequests: a.ZKRequests + b.ZKRequests, SessionsAlive: a.SessionsAlive + b.SessionsAlive,
	}
	if len(a.ErrorsByKind)+len(b.ErrorsByKind) > 0 {
		out.ErrorsByKind = maps.Clone(a.ErrorsByKind)
		if out.ErrorsByKind == nil {
			out.ErrorsByKind = map[string]int64{}
		}
		for k, n := range b.ErrorsByKind {
			out.ErrorsByKind[k] += n
		}
	}
	return out
}

func addAnomalies(a, b metrics.Anomalies) metrics.Anomalies {
	return metrics.Anomalies{OverRange: a.OverRange + b.OverRange, Negative: a.Negative + b.Negative,
		RecordErrors: a.RecordErrors + b.RecordErrors, MergeDropped: a.MergeDropped + b.MergeDropped}
}

func mergeInterval(dst *metrics.IntervalStats, iv metrics.IntervalStats) {
	if iv.Start.Before(dst.Start) {
		dst.Start = iv.Start
	}
	if iv.End.After(dst.End) {
		dst.End = iv.End
	}
	dst.Counts = addCounts(dst.Counts, iv.Counts)
	dst.UnknownPhase += iv.UnknownPhase
	for p, pt := range iv.Phases {
		cur := dst.Phases[p]
		dst.Phases[p] = metrics.PhasePoint{
			Count: cur.Count + pt.Count, P50: max(cur.P50, pt.P50), P90: max(cur.P90, pt.P90),
			P99: max(cur.P99, pt.P99), Max: max(cur.Max, pt.Max), CorrectedP99: max(cur.CorrectedP99, pt.CorrectedP99),
			OverRange: cur.OverRange + pt.OverRange, LostOrNegative: cur.LostOrNegative + pt.LostOrNegative,
		}
	}
}
