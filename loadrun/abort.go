package loadrun

import (
	"fmt"
	"sync"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// crossedForGood reports whether progress pr shows threshold t crossed
// for good: on a figure that only grows while the run goes (the errors,
// a phase's max latency) under an upper bound (< or <=), a value over the
// bound stays over it. Other thresholds (percentiles, throughput, error
// rate) can still recover, and are judged at the end only.
func crossedForGood(t scenarios.Threshold, pr loadgen.Progress) (value float64, crossed bool) {
	if t.Op != "<" && t.Op != "<=" {
		return 0, false
	}
	if t.Metric == scenarios.MetricErrors {
		return float64(pr.Errors), !t.Holds(float64(pr.Errors))
	}
	phase, stat, ok := t.Latency()
	if !ok || stat != "max" {
		return 0, false
	}
	var sum metrics.Summary
	switch {
	case pr.Phases != nil:
		s, ok := pr.Phases[metrics.Phase(phase)]
		if !ok {
			return 0, false
		}
		sum = s
	case string(pr.MainPhase) == phase:
		sum = pr.Main
	default:
		return 0, false
	}
	if sum.Count == 0 {
		return 0, false
	}
	v := sum.Max
	if sum.HasCorrection {
		v = sum.CorrectedMax // open model: from the intended start, as the report judges it
	}
	return v, !t.Holds(v)
}

// abortWatch ends a run (stop) at the first progress that crosses one of
// its thresholds for good (zkherd load --abort-on-fail, k6's abortOnFail),
// and says which in why.
type abortWatch struct {
	thresholds []scenarios.Threshold
	stop       func()
	name       func(input string) string // loadgen.Options.Name
	once       sync.Once
	mu         sync.Mutex
	why        string
}

// see is the run's progress hook.
func (a *abortWatch) see(pr loadgen.Progress) {
	if pr.State != "running" {
		return
	}
	for _, t := range a.thresholds {
		if v, crossed := crossedForGood(t, pr); crossed {
			a.once.Do(func() {
				a.mu.Lock()
				a.why = exit.Advice(a.name, "{abort-on-fail}: threshold %s crossed for good %.1fs into the window (%s); the run was stopped", t.Expr, pr.Window.Seconds(), fmtValue(t, v))
				a.mu.Unlock()
				a.stop()
			})
			return
		}
	}
}

// reason is why the watch stopped the run; "" when it did not.
func (a *abortWatch) reason() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.why
}

func fmtValue(t scenarios.Threshold, v float64) string {
	if _, _, lat := t.Latency(); lat {
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// reasonOf is a.reason(), "" for no watch.
func (a *abortWatch) reasonOf() string {
	if a == nil {
		return ""
	}
	return a.reason()
}
