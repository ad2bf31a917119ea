package loadgen

import (
	"maps"
	"slices"
	"testing"

	"github.com/zkherd/zkherd/scenarios"
)

// TestCheckListAgrees: the checks a run counts live (the progress, the
// stream, the metrics endpoint) are the summary's and report.html's
// checks that the run counts while it goes, for every recipe: both come
// from checkList.
func TestCheckListAgrees(t *testing.T) {
	live := map[string]bool{}
	for _, s := range checkList {
		live[s.Key] = s.live
	}
	for _, r := range scenarios.Recipes() {
		c := &checker{}
		c.foreignGrant.Store(1) // a foreign-delete run: its check is made
		got := slices.Sorted(maps.Keys(ViolationCounts(c.liveChecks(r))))
		var want []string
		for _, o := range (Checks{FIFOChecked: r.Spec().FIFO, ForeignGrants: 1}).List(r) {
			if live[o.Key] {
				want = append(want, o.Key)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: live checks %v, summary's live checks %v", r, got, want)
		}
	}
}

// TestCheckOutcomes: a check that could not run says so, and is not a
// failure; one of a recipe this version does not know is not shown as
// made.
func TestCheckOutcomes(t *testing.T) {
	list := (Checks{LeftoverZnodes: -1, MutualExclusionViolations: 2}).List(scenarios.FairLock)
	byKey := map[string]CheckOutcome{}
	for _, o := range list {
		byKey[o.Key] = o
	}
	if o := byKey["leftover_znodes"]; o.Value() != "not checked" || o.Bad() {
		t.Errorf("leftovers not looked at: %q, bad %v; want not checked, not bad", o.Value(), o.Bad())
	}
	if o := byKey["mutual_exclusion"]; o.Value() != "2" || !o.Bad() {
		t.Errorf("two overlaps: %q, bad %v; want 2, bad", o.Value(), o.Bad())
	}
	if _, ok := byKey["lost_items"]; ok {
		t.Errorf("a fair lock lists the queue's lost items: %v", list)
	}
	for _, o := range (Checks{}).List("some-future-recipe") {
		if o.Key == "leftover_znodes" && (o.Unknown || o.Value() != "0") {
			t.Errorf("leftovers of an unknown recipe: %q, want 0 (every recipe's)", o.Value())
		}
		if o.Key == "mutual_exclusion" && (!o.Unknown || o.Value() != "n/a") {
			t.Errorf("mutual exclusion of an unknown recipe: %q, want n/a", o.Value())
		}
	}
}
