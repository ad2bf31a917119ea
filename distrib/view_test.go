package distrib

import (
	"strconv"
	"testing"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
)

// TestViewSumsChecks: the whole run's live checks are every process's
// counts summed, a check another process counted (a fault's) included,
// in the checks list's order.
func TestViewSumsChecks(t *testing.T) {
	v := newView(&live{}, nil)
	v.others[1] = &viewPart{part: &Part{Now: &LiveFigures{ViolationCounts: map[string]int64{"mutual_exclusion": 2, "foreign_grants": 1}}}}
	own := loadgen.Progress{Recipe: scenarios.FairLock,
		Checks: loadgen.LiveChecks(map[string]int64{"mutual_exclusion": 1, "fencing": 0})}
	got := v.merged(own).Checks
	want := []string{"mutual_exclusion=3", "fencing=0", "foreign_grants=1"}
	if len(got) != len(want) {
		t.Fatalf("merged checks %+v, want %v", got, want)
	}
	for i, c := range got {
		if s := c.Key + "=" + strconv.FormatInt(c.Count, 10); s != want[i] {
			t.Errorf("check %d: %s, want %s", i, s, want[i])
		}
	}
}
