// Package report turns load runs into reports: report.json (field names in
// issue 4, stable for scripts and CI), a terminal summary, a side-by-side
// comparison of two runs, .hgrm and .hlog files per phase, and report.html,
// one self-contained page with inline SVG plots.
//
// A Run holds Scenarios. NewScenario builds one from a load generator's
// result (a *loadgen.Result: its metrics, herd measures, checks, events);
// Herd and Checks are loadgen's types, written as they are, and durations
// and times become milliseconds and seconds there and nowhere else. WriteDir writes every file
// of a run into a directory; ReadJSON reads a report.json back for Compare.
package report
