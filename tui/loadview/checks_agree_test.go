package loadview_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scenarios"
	"github.com/zkherd/zkherd/tui/loadview"
)

// TestChecksAgree: every check has one value, whoever shows it: the
// counted checks, the linearizability verdict and each threshold read
// the same in report.json's check_results, the summary and the
// dashboard's final frame; a check that could not be made reads "not
// checked" in all three, never 0 or a pass.
func TestChecksAgree(t *testing.T) {
	lin := func(result string) *oracle.Result {
		r := &oracle.Result{Model: "mutex", Operations: 40, Partitions: 1, Result: result, Scope: "run"}
		switch result {
		case oracle.ResultViolation:
			r.Violation = &oracle.Violation{Partition: "/lock", Detail: "two holders at once"}
		case oracle.ResultUnknown:
			r.NotChecked = []string{"/lock: the search ran out of time"}
		}
		return r
	}
	thresholds := func(exprs ...string) []scenarios.Threshold {
		var out []scenarios.Threshold
		for _, e := range exprs {
			th, err := scenarios.ParseThreshold(e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, th)
		}
		return out
	}
	tests := []struct {
		name       string
		recipe     scenarios.Recipe
		checks     loadgen.Checks
		lin        *oracle.Result
		thresholds []scenarios.Threshold
		// want are statuses the list must hold, by key.
		want map[string]string
	}{
		{"lock passes", scenarios.FairLock, loadgen.Checks{Passed: true, FIFOChecked: true},
			lin(oracle.ResultOK), thresholds("errors<1"),
			map[string]string{"mutual_exclusion": "pass", "linearizability": "pass", "threshold:errors<1": "pass"}},
		{"lock fails", scenarios.FairLock, loadgen.Checks{MutualExclusionViolations: 2, FIFOChecked: true},
			lin(oracle.ResultViolation), thresholds("throughput>1000000", "acquire.p99<500ms"),
			map[string]string{"mutual_exclusion": "fail", "linearizability": "fail",
				"threshold:throughput>1000000": "fail", "threshold:acquire.p99<500ms": "fail"}},
		{"not checked", scenarios.Queue, loadgen.Checks{LeftoverZnodes: -1},
			lin(oracle.ResultUnknown), nil,
			map[string]string{"leftover_znodes": "not checked", "linearizability": "not checked", "lost_items": "pass"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := scenarios.Spec{Name: "s", Recipe: tt.recipe, Clients: 10, Thresholds: tt.thresholds}
			run := scenarios.Run{Spec: spec}
			t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			totals := figures.Totals{figures.Operations: 1200, figures.Releases: 1100}
			res := &loadgen.Result{Run: run, Ops: 1200, Totals: totals, Checks: tt.checks, Linearizability: tt.lin,
				WindowStart: t0, Stop: t0.Add(10 * time.Second)}
			rep := &report.Run{RunID: "r", Scenarios: []*report.Scenario{report.NewScenario(res)}}

			var js bytes.Buffer
			if err := report.WriteJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Scenarios []struct {
					CheckResults []report.CheckResult `json:"check_results"`
				} `json:"scenarios"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			inJSON := map[string]report.CheckResult{}
			for _, c := range doc.Scenarios[0].CheckResults {
				inJSON[c.Key] = c
			}
			var sum bytes.Buffer
			if err := report.WriteSummaryWidth(&sum, rep, 0); err != nil {
				t.Fatal(err)
			}
			feed := loadview.NewFeedAt(t0, "t", "127.0.0.1:2181", "", []scenarios.Run{run})
			feed.Now = func() time.Time { return t0 }
			final := feed.Final([]*loadgen.Result{res}, false).Scenarios[0].Checks
			onDashboard := map[string]loadgen.CheckOutcome{}
			for _, c := range final {
				onDashboard[c.Key] = c
			}

			for key, status := range tt.want {
				if got := inJSON[key].Status; got != status {
					t.Errorf("%s: report.json says %q, want %q", key, got, status)
				}
			}
			if len(final) != len(inJSON) {
				t.Errorf("the dashboard has %d checks, report.json %d", len(final), len(inJSON))
			}
			for key, j := range inJSON {
				d, ok := onDashboard[key]
				switch {
				case !ok:
					t.Errorf("%s: in report.json, not on the dashboard", key)
				case d.Value() != j.Value || d.Status() != j.Status:
					t.Errorf("%s: the dashboard shows %q (%s), report.json %q (%s)", key, d.Value(), d.Status(), j.Value, j.Status)
				}
				if j.Status == "not checked" && (j.Count != nil || strings.HasPrefix(j.Value, "0")) {
					t.Errorf("%s: not checked, but report.json gives it a count: %v %q", key, j.Count, j.Value)
				}
				if ok && d.Made() != (j.Count != nil) || j.Count != nil && *j.Count != d.Count {
					t.Errorf("%s: the dashboard counts %d, report.json %v", key, d.Count, j.Count)
				}
				sep := " "
				if d.Group != loadgen.GroupCounted {
					sep = ": "
				}
				if text := j.Label + sep + j.Value; !strings.Contains(sum.String(), text) {
					t.Errorf("%s: the summary has no %q:\n%s", key, text, sum.String())
				}
			}
		})
	}
}
