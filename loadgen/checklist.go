package loadgen

import (
	"fmt"

	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/scenarios"
)

// CheckSpec is one correctness check of a run, defined once: the
// summary and report.html list it (Checks.List), and while the run goes
// the progress, the JSON stream and the metrics endpoint count it by
// Key (Progress.ViolationCounts). report.json keeps Checks' fields.
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

// made reports whether a run of spec with checks c made the check.
func (s CheckSpec) made(spec scenarios.RecipeSpec, c Checks) bool {
	if s.madeWhen != nil {
		return s.madeWhen(c)
	}
	return s.applies(spec, c)
}

// CheckOutcome is one check of a run as the summary and report.html show
// it.
type CheckOutcome struct {
	Key, Label string
	Count      int64
	// Failure: a count above 0 fails the run.
	Failure bool
	Extra   string
	// Unknown: the report's recipe is not one this version knows, and
	// the check does not apply to every recipe: it may not have been made.
	Unknown bool
}

// Bad reports whether the check failed.
func (o CheckOutcome) Bad() bool { return o.Failure && o.Count > 0 && !o.Unknown }

// Value writes the count, "not checked" when it could not be made (a
// count below 0).
func (o CheckOutcome) Value() string {
	switch {
	case o.Unknown:
		return "n/a"
	case o.Count < 0:
		return "not checked"
	}
	return format.Count(o.Count) + o.Extra
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

// liveCounts counts the violations so far of the checks a run of recipe
// makes while it goes (those known only at its end, such as the queue's
// lost items, are not here; nor those of faults until they count one).
func (c *checker) liveCounts(recipe scenarios.Recipe) map[string]int64 {
	spec := recipe.Spec()
	now := Checks{
		MutualExclusionViolations: c.mutex.Load(), FencingViolations: c.fencing.Load(),
		FIFOBypasses: c.fifo.Load(), FIFOChecked: spec.FIFO, SemaphoreOverIssued: c.overIssued.Load(),
		DoubleLeaders: c.doubleLeader.Load(), ForeignGrants: c.foreignGrant.Load(),
	}
	m := map[string]int64{}
	for _, s := range checkList {
		if s.live && s.made(spec, now) {
			m[s.Key] = s.count(now)
		}
	}
	return m
}
