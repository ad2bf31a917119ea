package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
)

// runReport is report.json (schema in issue 4).
type runReport struct {
	ZkherdVersion string           `json:"zkherd_version"`
	RunID         string           `json:"run_id"`
	Title         string           `json:"title"`
	Partial       bool             `json:"partial"`
	Server        string           `json:"server"`
	LocalEnsemble bool             `json:"local_ensemble"`
	Scenarios     []scenarioReport `json:"scenarios"`

	results []*loadgen.Result
}

type scenarioReport struct {
	Name           string                 `json:"name"`
	Recipe         string                 `json:"recipe"`
	Clients        int                    `json:"clients"`
	DurationS      float64                `json:"duration_s"`
	Operations     int64                  `json:"operations"`
	ThroughputPerS float64                `json:"throughput_per_s"`
	Errors         errorsReport           `json:"errors"`
	LatencyMs      map[string]phaseReport `json:"latency_ms"`
	Herd           herdReport             `json:"herd"`
	Checks         checksReport           `json:"checks"`
	Requests       map[string]int64       `json:"zk_requests_by_kind,omitempty"`
	Partial        bool                   `json:"partial"`
	Notes          []string               `json:"notes,omitempty"`
	Timeline       []intervalReport       `json:"timeline,omitempty"`
}

type errorsReport struct {
	Total  int64            `json:"total"`
	ByKind map[string]int64 `json:"by_kind"`
}

type phaseReport struct {
	Count        int64   `json:"count"`
	P50          float64 `json:"p50"`
	P90          float64 `json:"p90"`
	P99          float64 `json:"p99"`
	P999         float64 `json:"p999"`
	Max          float64 `json:"max"`
	CorrectedP99 float64 `json:"corrected_p99"`
}

type herdReport struct {
	WakeupsPerRelease           float64 `json:"wakeups_per_release"`
	ZKRequestsPerAcquisition    float64 `json:"zk_requests_per_acquisition"`
	ServerPacketsPerAcquisition float64 `json:"server_packets_per_acquisition"`
	WatchFanoutPerAcquisition   float64 `json:"watch_fanout_per_acquisition"`
}

type checksReport struct {
	MutualExclusionViolations int64    `json:"mutual_exclusion_violations"`
	FencingViolations         int64    `json:"fencing_violations"`
	FIFOBypasses              int64    `json:"fifo_bypasses"`
	MaxBypass                 int64    `json:"max_bypass"`
	SemaphoreOverIssued       int64    `json:"semaphore_over_issued"`
	DoubleLeaders             int64    `json:"double_leaders"`
	LostItems                 int64    `json:"lost_items"`
	DuplicateItems            int64    `json:"duplicate_items"`
	LeftoverZnodes            int64    `json:"leftover_znodes"`
	Violations                []string `json:"violations"`
	Passed                    bool     `json:"passed"`
}

type intervalReport struct {
	T              float64 `json:"t_s"`
	Ops            int64   `json:"ops"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	Errors         int64   `json:"errors"`
	SessionsAlive  int64   `json:"sessions_alive"`
	MainP99        float64 `json:"p99_ms"`
}

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}

// buildReport turns the runs' results into the report.
func buildReport(plan *loadPlan, server string, local bool, results []*loadgen.Result, partial bool) *runReport {
	rep := &runReport{
		ZkherdVersion: Version(),
		Title:         plan.title,
		Partial:       partial,
		Server:        server,
		LocalEnsemble: local,
		results:       results,
	}
	for _, res := range results {
		if rep.RunID == "" {
			rep.RunID = res.RunID
		}
		m := res.Metrics
		s := scenarioReport{
			Name:           res.Run.Name,
			Recipe:         string(res.Run.Recipe),
			Clients:        res.Run.Clients,
			DurationS:      round3(res.Stop.Sub(res.WindowStart).Seconds()),
			Operations:     res.Ops,
			ThroughputPerS: round3(res.Throughput),
			Errors:         errorsReport{Total: m.Counts.Errors, ByKind: m.Counts.ErrorsByKind},
			LatencyMs:      map[string]phaseReport{},
			Herd: herdReport{
				WakeupsPerRelease:           round3(res.Herd.WakeupsPerRelease),
				ZKRequestsPerAcquisition:    round3(res.Herd.ZKRequestsPerAcquisition),
				ServerPacketsPerAcquisition: round3(res.Herd.ServerPacketsPerAcquisition),
				WatchFanoutPerAcquisition:   round3(res.Herd.WatchFanoutPerAcquisition),
			},
			Checks: checksReport{
				MutualExclusionViolations: res.Checks.MutualExclusionViolations,
				FencingViolations:         res.Checks.FencingViolations,
				FIFOBypasses:              res.Checks.FIFOBypasses,
				MaxBypass:                 res.Checks.MaxBypass,
				SemaphoreOverIssued:       res.Checks.SemaphoreOverIssued,
				DoubleLeaders:             res.Checks.DoubleLeaders,
				LostItems:                 res.Checks.LostItems,
				DuplicateItems:            res.Checks.DuplicateItems,
				LeftoverZnodes:            res.Checks.LeftoverZnodes,
				Violations:                append([]string{}, res.Checks.Violations...),
				Passed:                    res.Checks.Passed,
			},
			Requests: res.Requests,
			Partial:  res.Partial,
			Notes:    res.Notes,
		}
		if s.Errors.ByKind == nil {
			s.Errors.ByKind = map[string]int64{}
		}
		for _, p := range m.Phases {
			sum := m.Summary(p)
			s.LatencyMs[string(p)] = phaseReport{
				Count: sum.Count, P50: sum.P50, P90: sum.P90, P99: sum.P99, P999: sum.P999,
				Max: sum.Max, CorrectedP99: sum.CorrectedP99,
			}
		}
		for _, iv := range m.Intervals {
			s.Timeline = append(s.Timeline, intervalReport{
				T:              round3(iv.End.Sub(m.Start).Seconds()),
				Ops:            iv.Counts.Ops,
				ThroughputPerS: round3(float64(iv.Counts.Ops) / math.Max(iv.Seconds(), 1e-9)),
				Errors:         iv.Counts.Errors,
				SessionsAlive:  iv.Counts.SessionsAlive,
				MainP99:        iv.Phases[metrics.Acquire].P99,
			})
		}
		rep.Scenarios = append(rep.Scenarios, s)
	}
	return rep
}

// failedChecks lists the runs whose checks failed, with their first
// violation.
func (r *runReport) failedChecks() []string {
	var out []string
	for _, s := range r.Scenarios {
		if !s.Checks.Passed {
			v := "failed"
			if len(s.Checks.Violations) > 0 {
				v = s.Checks.Violations[0]
			}
			out = append(out, fmt.Sprintf("%s: %s", s.Name, v))
		}
	}
	return out
}

// printSummary prints the final terminal summary.
func printSummary(w io.Writer, r *runReport) {
	title := r.Title
	if r.Partial {
		title += " (PARTIAL: stopped early)"
	}
	fmt.Fprintf(w, "\n%s on %s\n\n", title, r.Server)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label string, f func(s scenarioReport) string) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, s := range r.Scenarios {
			fmt.Fprintf(tw, "%s\t", f(s))
		}
		fmt.Fprintln(tw)
	}
	row("", func(s scenarioReport) string { return s.Name })
	row("recipe", func(s scenarioReport) string { return s.Recipe })
	row("clients", func(s scenarioReport) string { return fmt.Sprint(s.Clients) })
	row("window", func(s scenarioReport) string { return fmt.Sprintf("%.1fs", s.DurationS) })
	row("operations", func(s scenarioReport) string { return fmt.Sprint(s.Operations) })
	row("throughput", func(s scenarioReport) string { return fmt.Sprintf("%.1f/s", s.ThroughputPerS) })
	phases := map[string]bool{}
	for _, s := range r.Scenarios {
		for p := range s.LatencyMs {
			phases[p] = true
		}
	}
	for _, p := range metrics.Phases() {
		if !phases[string(p)] {
			continue
		}
		row(string(p)+" p50/p99", func(s scenarioReport) string {
			l, ok := s.LatencyMs[string(p)]
			if !ok {
				return "-"
			}
			return fmtMs(l.P50) + " / " + fmtMs(l.P99)
		})
	}
	row("acquire p99.9/max", func(s scenarioReport) string {
		l, ok := s.LatencyMs["acquire"]
		if !ok {
			return "-"
		}
		return fmtMs(l.P999) + " / " + fmtMs(l.Max)
	})
	row("wake-ups/release", func(s scenarioReport) string { return fmt.Sprintf("%.1f", s.Herd.WakeupsPerRelease) })
	row("zk requests/op", func(s scenarioReport) string { return fmt.Sprintf("%.1f", s.Herd.ZKRequestsPerAcquisition) })
	row("server packets/op", func(s scenarioReport) string {
		if s.Herd.ServerPacketsPerAcquisition < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f", s.Herd.ServerPacketsPerAcquisition)
	})
	row("watch fan-out/op", func(s scenarioReport) string {
		if s.Herd.WatchFanoutPerAcquisition < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f", s.Herd.WatchFanoutPerAcquisition)
	})
	row("errors", func(s scenarioReport) string { return fmt.Sprint(s.Errors.Total) })
	row("checks", func(s scenarioReport) string {
		if s.Checks.Passed {
			return "passed"
		}
		return "FAILED"
	})
	tw.Flush()
	for _, s := range r.Scenarios {
		if len(s.Errors.ByKind) > 0 {
			kinds := make([]string, 0, len(s.Errors.ByKind))
			for k, n := range s.Errors.ByKind {
				kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
			}
			sort.Strings(kinds)
			fmt.Fprintf(w, "%s errors: %s\n", s.Name, strings.Join(kinds, ", "))
		}
		for _, v := range s.Checks.Violations {
			fmt.Fprintf(w, "%s VIOLATION %s\n", s.Name, v)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "%s note: %s\n", s.Name, n)
		}
	}
	if len(r.Scenarios) == 2 {
		a, b := r.Scenarios[0], r.Scenarios[1]
		if a.ThroughputPerS > 0 && b.Herd.ServerPacketsPerAcquisition > 0 {
			fmt.Fprintf(w, "\n%s vs %s: throughput %.1fx, server packets per acquisition %.0fx lower, wake-ups per release %.0fx lower\n",
				b.Name, a.Name, b.ThroughputPerS/a.ThroughputPerS,
				a.Herd.ServerPacketsPerAcquisition/b.Herd.ServerPacketsPerAcquisition,
				a.Herd.WakeupsPerRelease/math.Max(b.Herd.WakeupsPerRelease, 1e-9))
		}
	}
}

// writeReport writes report.json, the .hgrm and .hlog of every phase and
// report.html into dir.
func writeReport(dir string, r *runReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	for _, res := range r.results {
		for _, p := range res.Metrics.Phases {
			base := filepath.Join(dir, fmt.Sprintf("%s.%s", res.Run.Name, p))
			if err := writeFile(base+".hgrm", func(w io.Writer) error { return res.Metrics.WriteHgrm(w, p, false) }); err != nil {
				return err
			}
			if err := writeFile(base+".hlog", func(w io.Writer) error { return res.Metrics.WriteHlog(w, p) }); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newReportCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Print or compare load reports",
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "show DIR/report.json",
			Short: "Print the summary of a load report",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				r, err := readReport(args[0])
				if err != nil {
					return err
				}
				printSummary(cmd.OutOrStdout(), r)
				return nil
			},
		},
		&cobra.Command{
			Use:   "compare A/report.json B/report.json",
			Short: "Print two load reports side by side",
			Args:  cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				a, err := readReport(args[0])
				if err != nil {
					return err
				}
				b, err := readReport(args[1])
				if err != nil {
					return err
				}
				both := &runReport{Title: fmt.Sprintf("%s vs %s", args[0], args[1]), Server: a.Server + " / " + b.Server}
				both.Scenarios = append(append(both.Scenarios, a.Scenarios...), b.Scenarios...)
				printSummary(cmd.OutOrStdout(), both)
				return nil
			},
		},
	)
	return cmd
}

// readReport reads a report.json, or the one in a directory.
func readReport(path string) (*runReport, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "report.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	var r runReport
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, usageErr("%s is not a zkherd report: %v", path, err)
	}
	if len(r.Scenarios) == 0 {
		return nil, usageErr("%s is not a zkherd report: no scenarios", path)
	}
	return &r, nil
}
