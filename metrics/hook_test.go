package metrics

import (
	"testing"
	"time"
)

// TestIntervalHookSeesEveryValue: the hook gets every closed interval,
// the last one Finish closes included, so what it adds up equals the
// run's totals.
func TestIntervalHookSeesEveryValue(t *testing.T) {
	seen := map[Phase]int64{}
	start := time.Now()
	rec, err := NewRecorder(start, WithIntervalHook(func(p Phase, pi *PhaseInterval) {
		seen[p] += pi.Corrected.TotalCount()
	}))
	if err != nil {
		t.Fatal(err)
	}
	sh := rec.NewShard()
	for i := range 300 {
		sh.Record(Acquire, time.Duration(i+1)*time.Millisecond)
		if i == 100 {
			rec.Rotate(start.Add(time.Second))
		}
	}
	res := rec.Finish(start.Add(2 * time.Second))
	if want := res.Totals[Acquire].Corrected.TotalCount(); seen[Acquire] != want || want != 300 {
		t.Errorf("hook saw %d acquire values, totals hold %d, want 300 both", seen[Acquire], want)
	}
}
