package loadgen

import (
	"fmt"

	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/scenarios"
)

// CheckSpec is one correctness check of a run, defined once: the
// summary and report.html list it (Checks.List), and while the run goes
// the progress, the JSON stream and the metrics endpoint count it by
// Key (Progress.Checks). report.json keeps Checks' fields and writes
// the list (check_results).
type CheckSpec struct {
	// Key names it in the live counts (the exporter's check label).
	Key string
	// Label names it in the summary and report.html.
	Label string
	// applies says whether a run of the recipe makes it, given its
	// checks; nil with madeWhen.
	applies func(r scenarios.RecipeSpec, c Checks) bool
	// madeWhen, for a check of faults some runs inject, says it was made
	// (and is shown): when it counted something.
	madeWhen func(c Checks) bool
	// count is its count in the final checks; below 0 it could not be
	// made ("not checked").
	count func(c Checks) int64
	// live: it is counted while the run goes (not only at its end, as
	// the queue's items and the leftovers are).
	live bool
	// Failure: a count above 0 fails the run; else it is told only.
	Failure bool
	// extra is written after the count, if set.
	extra func(c Checks) string
}

// checkList is the one list of checks, in the order they are shown.
var checkList = []CheckSpec{
	{Key: "mutual_exclusion", Label: "mutual exclusion", Failure: true,
		applies: func(r scenarios.RecipeSpec, _ Checks) bool { return r.Exclusive },
		count:   func(c Checks) int64 { return c.MutualExclusionViolations }, live: true},
	{Key: "fencing", Label: "fencing", Failure: true,
		applies: func(r scenarios.RecipeSpec, _ Checks) bool { return r.Fenced },
		count:   func(c Checks) int64 { return c.FencingViolations }, live: true},
	{Key: "fifo", Label: "FIFO bypasses", Failure: true,
		applies: func(_ scenarios.RecipeSpec, c Checks) bool { return c.FIFOChecked },
		count:   func(c Checks) int64 { return c.FIFOBypasses }, live: true,
		extra: func(c Checks) string { return fmt.Sprintf(" (max %d)", c.MaxBypass) }},
	{Key: "semaphore_over_issued", Label: "semaphore over-issued", Failure: true,
		applies: func(r scenarios.RecipeSpec, _ Checks) bool { return r.Limited == "semaphore_over_issued" },
		count:   func(c Checks) int64 { return c.SemaphoreOverIssued }, live: true},
	{Key: "double_leader", Label: "double leaders", Failure: true,
		applies: func(r scenarios.RecipeSpec, _ Checks) bool { return r.Limited == "double_leader" },
		count:   func(c Checks) int64 { return c.DoubleLeaders }, live: true},
	{Key: "lost_items", Label: "lost items", Failure: true,
		applies: func(r scenarios.RecipeSpec, _ Checks) bool { return r.Items },
		count:   func(c Checks) int64 { return c.LostItems }},
	{Key: "duplicate_items", Label: "duplicate items", Failure: true,
		applies: func(r scenarios.RecipeSpec, _ Checks) bool { return r.Items },
		count:   func(c Checks) int64 { return c.DuplicateItems }},
	{Key: "leftover_znodes", Label: "leftover znodes", Failure: true,
		applies: func(scenarios.RecipeSpec, Checks) bool { return true },
		count:   func(c Checks) int64 { return c.LeftoverZnodes }},
	{Key: "foreign_grants", Label: "grants of nodes another client deleted", Failure: true,
		madeWhen: func(c Checks) bool { return c.ForeignGrants > 0 },
		count:    func(c Checks) int64 { return c.ForeignGrants }, live: true},
	{Key: "foreign_deleted_items", Label: "items deleted by another client",
		madeWhen: func(c Checks) bool { return c.ForeignDeletedItems > 0 },
		count:    func(c Checks) int64 { return c.ForeignDeletedItems }},
	{Key: "foreign_deleted_holders", Label: "holders whose node another client deleted (told they lost it)",
		madeWhen: func(c Checks) bool { return c.ForeignDeletedHolders > 0 },
		count:    func(c Checks) int64 { return c.ForeignDeletedHolders }},
	{Key: "lost_grants_unreported", Label: "lost grants not reported", Failure: true,
		madeWhen: func(c Checks) bool { return c.LostGrants > 0 },
		count:    func(c Checks) int64 { return c.LostGrants - c.LostGrantsReported },
		extra: func(c Checks) string {
			return fmt.Sprintf(" (%d of %d lost grants reported)", c.LostGrantsReported, c.LostGrants)
		}},
	{Key: "foreign_raced_grants", Label: "grants racing another client's delete",
		madeWhen: func(c Checks) bool { return c.ForeignRacedGrants > 0 || c.ForeignExcusedOverlaps > 0 },
		count:    func(c Checks) int64 { return c.ForeignRacedGrants },
		extra:    func(c Checks) string { return fmt.Sprintf(" (%d overlap(s) of its doing)", c.ForeignExcusedOverlaps) }},
}

// CheckOutcome is one check of a run, the one shape every output reads:
// the summary, report.json's check_results, report.html, the dashboard
// and the metrics endpoint. Besides checkList's counted checks, the
// linearizability verdict (LinearizabilityCheck) and each threshold
// (report) are outcomes of this shape, in their own Group.
type CheckOutcome struct {
	Key, Label string
	// Count is the violations found (1 for a linearizability violation
	// or a crossed threshold); below 0 the check could not be made.
	Count int64
	// Failure: a count above 0 fails the run.
	Failure bool
	Extra   string
	// Text, when set, is the value shown instead of the count: a verdict
	// ("ok (...)", "123ms CROSSED").
	Text string
	// Group is the summary's line the check is listed on.
	Group CheckGroup
	// Unknown: the report's recipe is not one this version knows, and
	// the check does not apply to every recipe: it may not have been made.
	Unknown bool
}

// CheckGroup is the kind of a check: where the summary and report.html
// list it.
type CheckGroup string

// The groups of checks.
const (
	// GroupCounted: checkList's, counted by the run.
	GroupCounted CheckGroup = ""
	// GroupLinearizability: the oracle's verdict on the run's history.
	GroupLinearizability CheckGroup = "linearizability"
	// GroupThresholds: the user's thresholds on the run's figures.
	GroupThresholds CheckGroup = "thresholds"
)

// Bad reports whether the check failed.
func (o CheckOutcome) Bad() bool { return o.Failure && o.Count > 0 && !o.Unknown }

// Made reports whether the check was made: its count means something.
func (o CheckOutcome) Made() bool { return o.Count >= 0 && !o.Unknown }

// Value writes the count (or the verdict, Text), "not checked" when it
// could not be made (a count below 0).
func (o CheckOutcome) Value() string {
	switch {
	case o.Unknown:
		return "n/a"
	case o.Text != "":
		return o.Text
	case o.Count < 0:
		return "not checked"
	}
	return format.Count(o.Count) + o.Extra
}

// Status is the outcome in a word: "pass", "fail", "not checked", "told"
// (a count that does not fail the run) or "n/a" (a report of a recipe
// this version does not know).
func (o CheckOutcome) Status() string {
	switch {
	case o.Unknown:
		return "n/a"
	case o.Count < 0:
		return "not checked"
	case o.Bad():
		return "fail"
	case o.Count > 0:
		return "told"
	}
	return "pass"
}

// ViolationCounts are the counts of the checks of list that were made, by
// key: the metrics endpoint's and the stream's (a check not made has no
// entry: not checked is not 0).
func ViolationCounts(list []CheckOutcome) map[string]int64 {
	m := map[string]int64{}
	for _, o := range list {
		if o.Made() {
			m[o.Key] = o.Count
		}
	}
	return m
}

// List is the checks a run of recipe made, in checkList's order. For a
// recipe this version does not know (a report from another one), every
// check is listed, those that do not apply to every recipe as unknown.
func (c Checks) List(recipe scenarios.Recipe) []CheckOutcome {
	spec := recipe.Spec()
	var out []CheckOutcome
	for _, s := range checkList {
		o := CheckOutcome{Key: s.Key, Label: s.Label, Count: s.count(c), Failure: s.Failure}
		switch {
		case s.madeWhen != nil:
			if !s.madeWhen(c) {
				continue
			}
		case !s.applies(spec, c) && recipe.Valid():
			continue
		case !s.applies(spec, c):
			o.Unknown = true
		}
		if s.extra != nil && o.Count >= 0 && !o.Unknown {
			o.Extra = s.extra(c)
		}
		out = append(out, o)
	}
	return out
}

// liveChecks are the checks so far that a run of recipe makes while it
// goes (those known only at its end, such as the queue's lost items, are
// not here; nor those of faults until they count one).
func (c *checker) liveChecks(recipe scenarios.Recipe) []CheckOutcome {
	spec := recipe.Spec()
	now := Checks{
		MutualExclusionViolations: c.mutex.Load(), FencingViolations: c.fencing.Load(),
		FIFOBypasses: c.fifo.Load(), FIFOChecked: spec.FIFO, SemaphoreOverIssued: c.overIssued.Load(),
		DoubleLeaders: c.doubleLeader.Load(), ForeignGrants: c.foreignGrant.Load(),
	}
	var out []CheckOutcome
	for _, o := range now.List(recipe) {
		if s := specOf(o.Key); s.live {
			o.Extra = "" // what it adds is counted at the end
			out = append(out, o)
		}
	}
	return out
}

// LiveChecks is the live checks of counts (ViolationCounts summed over
// the processes of a distributed run), in checkList's order.
func LiveChecks(counts map[string]int64) []CheckOutcome {
	var out []CheckOutcome
	for _, s := range checkList {
		if n, ok := counts[s.Key]; ok && s.live {
			out = append(out, CheckOutcome{Key: s.Key, Label: s.Label, Count: n, Failure: s.Failure})
		}
	}
	return out
}

// specOf is the checkList entry of key.
func specOf(key string) CheckSpec {
	for _, s := range checkList {
		if s.Key == key {
			return s
		}
	}
	return CheckSpec{}
}
