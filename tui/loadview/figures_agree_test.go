package loadview_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scenarios"
	"github.com/zkherd/zkherd/tui/loadview"
)

// TestFiguresAgree: every figure has one value, whoever shows it: the
// value in report.json, the one the summary prints and the one the
// dashboard's feed shows (live and final) are the same, for each recipe
// kind and with the server counts unknown.
func TestFiguresAgree(t *testing.T) {
	full := figures.Totals{figures.Operations: 1200, figures.Releases: 1100, figures.Wakeups: 5500,
		figures.ZKRequests: 7321, figures.ServerPackets: 19876, figures.WatchFanout: 5600}
	noServer := full.Clone()
	delete(noServer, figures.ServerPackets)
	delete(noServer, figures.WatchFanout)
	tests := []struct {
		name   string
		recipe scenarios.Recipe
		totals figures.Totals
	}{
		{"lock", scenarios.FairLock, full},
		{"queue", scenarios.Queue, full},
		{"server counts unknown", scenarios.HerdLock, noServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := scenarios.Run{Spec: scenarios.Spec{Name: tt.name, Recipe: tt.recipe, Clients: 10}}
			t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			res := &loadgen.Result{Run: run, Ops: tt.totals[figures.Operations], Totals: tt.totals,
				WindowStart: t0, Stop: t0.Add(10 * time.Second)}
			rep := &report.Run{RunID: "r", Scenarios: []*report.Scenario{report.NewScenario(res)}}

			var js bytes.Buffer
			if err := report.WriteJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Scenarios []struct {
					Herd map[string]any `json:"herd"`
				} `json:"scenarios"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			var sum bytes.Buffer
			if err := report.WriteSummaryWidth(&sum, rep, 400); err != nil {
				t.Fatal(err)
			}
			feed := loadview.NewFeedAt(t0, "t", "127.0.0.1:2181", "", []scenarios.Run{run})
			feed.Now = func() time.Time { return t0 }
			live := feed.Progress(loadgen.Progress{Name: run.Name, Recipe: tt.recipe, State: "running", Totals: tt.totals})
			final := feed.Final([]*loadgen.Result{res}, false)

			for _, f := range figures.For(tt.recipe.Figures()) {
				want := f.Of(tt.totals)
				got, ok := doc.Scenarios[0].Herd[f.Key].(float64)
				if !ok || got != want {
					t.Errorf("%s: report.json has %v, want %v", f.Key, doc.Scenarios[0].Herd[f.Key], want)
				}
				label := f.LabelFor(tt.recipe.Figures())
				m := regexp.MustCompile(`(\S+) ` + regexp.QuoteMeta(label)).FindStringSubmatch(sum.String())
				if m == nil {
					t.Errorf("%s: the summary has no %q:\n%s", f.Key, label, sum.String())
				} else if !sameText(m[1], want) {
					t.Errorf("%s: the summary prints %s, report.json %v", f.Key, m[1], want)
				}
				if !f.Dashboard {
					continue
				}
				for name, snap := range map[string]loadview.Snapshot{"live": live, "final": final} {
					if got := snap.Scenarios[0].Herd.Value(f.Key); got != want {
						t.Errorf("%s: the %s dashboard shows %v, report.json %v", f.Key, name, got, want)
					}
				}
			}
		})
	}
}

// sameText reports whether a summary's text is v as the summary writes it
// (one decimal, thousands separated, n/a when unknown).
func sameText(text string, v float64) bool {
	if v < 0 {
		return text == "n/a"
	}
	got, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", ""), 64)
	return err == nil && strconv.FormatFloat(got, 'f', 1, 64) == strconv.FormatFloat(v, 'f', 1, 64)
}
