package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// chaosRun is a fair-lock run with faults whose holders ignored Lost():
// overlaps caught by fencing.
func chaosRun(t *testing.T) *Run {
	s := fairLock.scenario(t)
	s.Name = "fair-lock-zombie"
	s.Faults = &Faults{
		Occurrences: 14, Skipped: 1, SessionsExpired: 5, LeaderKills: 2, Pauses: 1, ConnectionsCut: 6,
		CutsOnCreate: 3, CutsOnDelete: 3, SessionTimeoutMs: 4000,
		Problems: []string{"expire-holder: nobody held anything for 1s"},
		Recovery: []Recovery{
			{What: "lock_back", Description: "lock granted again after its holder's session expired", Count: 5, Recovered: 5, MeanMs: 140, P50Ms: 120, MaxMs: 230},
			{What: "ensemble_leader_back", Description: "ensemble leader elected again after a leader kill", Count: 2, Recovered: 2, MeanMs: 700, P50Ms: 640, MaxMs: 760},
		},
	}
	s.Fencing = &Fencing{Writes: 412, Rejected: 9, OverlapCount: 2, IgnoreLost: true, Overlaps: []Overlap{
		{Lock: "/zkherd/runs/77aa/lock-000", StaleToken: 4294967446, NewerToken: 4294967502, StaleSession: "0x100001b5ea20002",
			NewerSession: "0x100001b5ea20005", T: 3.1, Rejected: 5, StaleLost: true},
		{Lock: "/zkherd/runs/77aa/lock-000", StaleToken: 4294967600, NewerToken: 4294967655, StaleSession: "0x100001b5ea20005",
			NewerSession: "0x100001b5ea20001", T: 5.2, Rejected: 4, StaleLost: true},
	}}
	s.Events = append(s.Events,
		Event{T: 3.0, Kind: EventFault, Detail: "expired the session 0x100001b5ea20002 of lock-000's holder (fencing token 4294967446)"},
		Event{T: 3.1, Kind: EventRecover, Detail: "lock-000 granted again 120ms after its holder's session expired (session timeout 4s)"})
	return &Run{ZkherdVersion: "0.1.0-test", RunID: "77aa", Title: "fair-lock-zombie", Server: "127.0.0.1:2181",
		LocalEnsemble: true, StartedAt: t0, Scenarios: []*Scenario{s}}
}

// sweepRun is a herd-vs-fair sweep with its scale model.
func sweepRun(t *testing.T) *Run {
	r := herdVsFair(t)
	r.Title = "herd-vs-fair sweep"
	r.ScaleModel = &ScaleModel{Recipes: []ScaleRecipe{
		{Name: "herd", Recipe: "herd-lock", Shape: "linear",
			PacketsModel:    "packets/acq = 12 + 3.02*N (R² 1.00, 3 points)",
			ThroughputModel: "throughput = 4.2e+04*N^-1.02 /s (R² 0.99 on log-log scales, 3 points)",
			Points: []ScalePoint{
				{Clients: 100, Measured: true, ThroughputPerS: 312, PacketsPerAcquisition: 310, ModelThroughputPerS: 315, ModelPacketsPerAcquisition: 314},
				{Clients: 1000, Measured: true, ThroughputPerS: 45, PacketsPerAcquisition: 3050, ModelThroughputPerS: 45.2, ModelPacketsPerAcquisition: 3032},
				{Clients: 100000, ThroughputPerS: -1, PacketsPerAcquisition: -1, ModelThroughputPerS: 0.48, ModelPacketsPerAcquisition: 302012},
			}},
		{Name: "fair", Recipe: "fair-lock", Shape: "constant",
			PacketsModel:    "packets/acq = 8.1 (constant: mean of 3 points, 7.9..8.3)",
			ThroughputModel: "throughput = 800/s (constant: geometric mean of 3 points, 790..810)",
			Points: []ScalePoint{
				{Clients: 100, Measured: true, ThroughputPerS: 790, PacketsPerAcquisition: 8.3, ModelThroughputPerS: 800, ModelPacketsPerAcquisition: 8.1},
				{Clients: 5000, Measured: true, ThroughputPerS: 0.2, PacketsPerAcquisition: 46493, ModelThroughputPerS: -1, ModelPacketsPerAcquisition: -1,
					Excluded: "only 1 operations in the 5s window, mostly the stampede's start; run longer (--duration)"},
				{Clients: 100000, ThroughputPerS: -1, PacketsPerAcquisition: -1, ModelThroughputPerS: 800, ModelPacketsPerAcquisition: 8.1},
			}},
	}}
	return r
}

func TestFaultsAndScaleOutputs(t *testing.T) {
	tests := []struct {
		name     string
		run      func(*testing.T) *Run
		wantJSON []string
		wantHTML []string
	}{
		{"faults", chaosRun,
			[]string{`"faults":`, `"sessions_expired": 5`, `"cuts_on_create": 3`, `"recovery":`, `"fencing":`, `"overlaps":`, `"stale_token": 4294967446`, `"ignore_lost": true`},
			[]string{"<h3>Faults</h3>", "leader kills", "lock granted again after its holder&#39;s session expired", "<h3>Fencing</h3>",
				"token 4294967446 (session 0x100001b5ea20002) still writing after token 4294967502", "Session timeout 4.00s"}},
		{"scale", sweepRun,
			[]string{`"scale_model":`, `"model_throughput_per_s": 0.48`, `"shape": "constant"`, `"excluded": "only 1 operations`},
			[]string{"<h2>Scale model</h2>", "herd (herd-lock, linear model)", "3.02*N (R² 1.00, 3 points)", "predicted", "5,000 clients not fitted: only 1 operations"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := tt.run(t)
			var js, sum, page bytes.Buffer
			if err := WriteJSON(&js, run); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wantJSON {
				if !strings.Contains(js.String(), w) {
					t.Errorf("report.json does not contain %s", w)
				}
			}
			path := filepath.Join(t.TempDir(), "report.json")
			if err := os.WriteFile(path, js.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			back, err := ReadJSON(path)
			if err != nil {
				t.Fatalf("ReadJSON: %v", err)
			}
			if (back.ScaleModel == nil) != (run.ScaleModel == nil) || (back.Scenarios[0].Faults == nil) != (run.Scenarios[0].Faults == nil) {
				t.Errorf("ReadJSON lost the faults or the scale model")
			}
			if err := WriteSummary(&sum, run); err != nil {
				t.Fatal(err)
			}
			checkWidth(t, sum.String())
			checkGolden(t, sum.Bytes())
			if err := WriteHTML(&page, run); err != nil {
				t.Fatal(err)
			}
			checkWellFormed(t, page.String())
			for _, svg := range regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page.String(), -1) {
				checkWellFormed(t, svg)
			}
			for _, w := range tt.wantHTML {
				if !strings.Contains(page.String(), w) {
					t.Errorf("report.html does not contain %q", w)
				}
			}
		})
	}
}
