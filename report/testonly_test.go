package report

import "io"

// Helpers only the tests use, kept out of the binary.

// WriteSummary prints the terminal summary of a run: per scenario the
// operations, rate and errors, a table of phases (count, rate, p50, p90,
// p99, p99.9, max, corrected p99), the herd measures and the checks with
// their violations; with several scenarios, the first side by side with
// each of the others; and the overall verdict. No line is wider than Width.
func WriteSummary(w io.Writer, run *Run) error { return WriteSummaryWidth(w, run, Width) }
