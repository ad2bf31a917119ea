package scenarios

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkherd/zkherd/figures"
)

// ErrThreshold is matched (errors.Is) by every error ParseThreshold returns.
var ErrThreshold = errors.New("scenarios: bad threshold")

// ThresholdError is what ParseThreshold returns: the expression and what
// is wrong with it, so that a flag or a scenario file can name it in its
// own terms (Detail) without editing the message.
type ThresholdError struct {
	Expr   string
	Reason string
}

func (e *ThresholdError) Error() string { return ErrThreshold.Error() + " " + e.Detail() }

// Unwrap makes the error match ErrThreshold.
func (e *ThresholdError) Unwrap() error { return ErrThreshold }

// Detail is the error without its kind: the quoted expression and the
// reason, such as `"x<1": unknown metric "x"; ...`.
func (e *ThresholdError) Detail() string { return fmt.Sprintf("%q: %s", e.Expr, e.Reason) }

func badThreshold(expr, format string, args ...any) error {
	return &ThresholdError{Expr: expr, Reason: fmt.Sprintf(format, args...)}
}

// Threshold is a pass/fail criterion on a figure of a run, as k6 has them:
// "acquire.p99<500ms", "throughput>300", "errors<=0". A run whose figure
// does not meet it fails.
type Threshold struct {
	// Scenario, when set, limits the threshold to the run of that name (a
	// compare step); empty applies it to every run.
	Scenario string
	// Metric is "throughput" (operations per second of the window),
	// "errors" (failed operations), "error_rate" (failed per completed
	// operation), a figure's key (figures.Keys, such as
	// wakeups_per_release), or PHASE.STAT with STAT one of ThresholdStats.
	Metric string
	// Op is one of <, <=, >, >=.
	Op string
	// Value is in milliseconds for latencies, per second for throughput,
	// a count or a fraction otherwise.
	Value float64
	// Expr is the threshold as written.
	Expr string
}

// Metrics a threshold can name that are not phase latencies.
const (
	MetricThroughput = "throughput"
	MetricErrors     = "errors"
	MetricErrorRate  = "error_rate"
)

// ThresholdStats lists the statistics of a phase's latency a threshold can
// name: PHASE.p99 and so on.
func ThresholdStats() []string {
	return []string{"p50", "p90", "p99", "p99.9", "max", "mean"}
}

// thresholdOps are the comparisons, longest first so that "<=" is not
// read as "<".
var thresholdOps = []string{"<=", ">=", "<", ">"}

// ParseThreshold parses "[SCENARIO:]METRIC OP VALUE", such as
// "acquire.p99<500ms", "fair:acquire.p99.9 <= 2s", "throughput>300" or
// "errors<=0". Latency values need a unit (us, ms, s).
func ParseThreshold(expr string) (Threshold, error) {
	t := Threshold{Expr: strings.TrimSpace(expr)}
	s := strings.ReplaceAll(t.Expr, " ", "")
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return t, badThreshold(expr, "want METRIC<VALUE or METRIC>VALUE, such as acquire.p99<500ms or throughput>300")
	}
	lhs, rest := s[:i], s[i:]
	for _, op := range thresholdOps {
		if strings.HasPrefix(rest, op) {
			t.Op, rest = op, rest[len(op):]
			break
		}
	}
	if name, metric, ok := strings.Cut(lhs, ":"); ok {
		if name == "" {
			return t, badThreshold(expr, "empty scenario name before ':'")
		}
		t.Scenario, lhs = name, metric
	}
	t.Metric = lhs
	switch {
	case lhs == MetricThroughput || lhs == MetricErrors || lhs == MetricErrorRate || isFigure(lhs):
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil || v < 0 {
			return t, badThreshold(expr, "%s takes a number, such as %s>300", lhs, lhs)
		}
		t.Value = v
	default:
		phase, stat, ok := strings.Cut(lhs, ".")
		if !ok || !validPhaseName(phase) || !validStat(stat) {
			return t, badThreshold(expr, "unknown metric %q; use throughput, errors, error_rate, a figure (%s) or PHASE.STAT (STAT one of %s), such as acquire.p99",
				lhs, strings.Join(figures.Keys(), ", "), strings.Join(ThresholdStats(), ", "))
		}
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return t, badThreshold(expr, "%q is not a latency; use a unit, such as 500ms or 2s", rest)
		}
		t.Value = float64(d) / float64(time.Millisecond)
	}
	return t, nil
}

func validStat(s string) bool {
	for _, x := range ThresholdStats() {
		if s == x {
			return true
		}
	}
	return false
}

// validPhaseName is the syntax of a phase (see the metrics package): a-z,
// 0-9 and '_', starting with a letter.
func validPhaseName(p string) bool {
	if p == "" || len(p) > 40 || p[0] < 'a' || p[0] > 'z' {
		return false
	}
	for _, c := range []byte(p) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// Latency reports whether the threshold is on a phase's latency; phase and
// stat are then its parts.
func (t Threshold) Latency() (phase, stat string, ok bool) {
	switch {
	case t.Metric == MetricThroughput, t.Metric == MetricErrors, t.Metric == MetricErrorRate, isFigure(t.Metric):
		return "", "", false
	}
	return strings.Cut(t.Metric, ".")
}

func isFigure(name string) bool {
	_, ok := figures.Lookup(name)
	return ok
}

// AppliesTo reports whether the threshold applies to the run called name.
func (t Threshold) AppliesTo(name string) bool { return t.Scenario == "" || t.Scenario == name }

// Holds reports whether value meets the threshold.
func (t Threshold) Holds(value float64) bool {
	switch t.Op {
	case "<":
		return value < t.Value
	case "<=":
		return value <= t.Value
	case ">":
		return value > t.Value
	case ">=":
		return value >= t.Value
	}
	return false
}

// String is the threshold as written.
func (t Threshold) String() string { return t.Expr }
