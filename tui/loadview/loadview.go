// Package loadview defines the data the load dashboard renders, one
// Snapshot per update, and the Feed that builds snapshots from the load
// generator's progress for tui.RunLoad. It has no user-interface code.
package loadview

import (
	"time"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
)

// Snapshot is the state of a load run at one moment. The dashboard shows
// the latest one it received; a snapshot is never modified after it is sent,
// so build a fresh one (slices included) for every update.
type Snapshot struct {
	Title    string        // the run, e.g. "herd-vs-fair"
	RunID    string        // namespace id, shown in the header
	Server   string        // connect string of the ensemble under load
	Elapsed  time.Duration // since the run started
	Duration time.Duration // planned length; 0 when the run ends by operation count
	Done     bool          // the run finished; this is the final frame
	Partial  bool          // the run was stopped early (Ctrl-C)
	// Scenarios are shown side by side when there are two (herd vs fair),
	// one above the other otherwise.
	Scenarios []Scenario
	Faults    []Fault  // injected faults, in time order
	Notices   []string // one-line messages for the user, newest last
	// Report is where the report goes once the user quits a finished run
	// ("" when none is written: the summary is printed instead).
	Report string
}

// Scenario is one scenario of the run.
type Scenario struct {
	Name   string // e.g. "fair-lock"
	Recipe string // e.g. "fair lock"
	State  string // e.g. "waiting", "ramping up", "running", "done"
	// Started is when the scenario began, since the run started; fault
	// times are placed on its throughput series with it.
	Started time.Duration
	// Clients is the number of simulated clients asked for; SessionsAlive
	// those whose ZooKeeper session currently lives.
	Clients       int
	SessionsAlive int
	Ops           int64 // completed operations (acquisitions, items...)
	// Throughput is operations per second, one value per interval (1 s),
	// oldest first; the dashboard shows the tail that fits.
	Throughput []float64
	// Phases are latency distributions, e.g. acquire, handoff, hold.
	Phases      []Phase
	ErrorsTotal int64
	Errors      []ErrorCount // by kind, largest first
	Herd        Herd
	// Lock is who waits on whom at the lock under test, from the
	// generator's own clients (lock scenarios; nil otherwise).
	Lock *loadgen.WaitGraph
	// QueueDepth is sampled queue depth, oldest first (queue scenarios).
	QueueDepth []float64
	// Checks are the run's checks: while it goes those it counts live,
	// once done every one of its report (report.Scenario.CheckList: the
	// linearizability verdict and the thresholds included).
	Checks []loadgen.CheckOutcome
	// Violations are failed correctness checks, one line each, e.g.
	// "mutual exclusion: 2 overlapping holds". Empty while all pass.
	Violations []string
}

// Phase is the latency distribution of one phase.
type Phase struct {
	Name                     string
	Count                    int64
	P50, P90, P99, P999, Max time.Duration
	// Buckets is a histogram for the text plot, in increasing UpTo order;
	// optional.
	Buckets []Bucket
	// P50s and P99s are the phase's percentiles per interval, oldest
	// first, aligned with Scenario.Throughput (0 where an interval had no
	// value).
	P50s, P99s []time.Duration
}

// Bucket counts latencies in (previous UpTo, UpTo].
type Bucket = metrics.Bucket

// ErrorCount is the number of errors of one kind.
type ErrorCount struct {
	Kind  string
	Count int64
}

// Herd holds the dashboard's figures (figures.All with Dashboard set, the
// ones that apply to the recipe), in the list's order.
type Herd struct {
	Figures []Figure
}

// Figure is one figure's label and value now.
type Figure struct {
	Key, Label string
	// Value is figures.Unknown until known (server counts before their
	// first poll).
	Value float64
}

// Value returns the figure key's value, figures.Unknown when it has none.
func (h Herd) Value(key string) float64 {
	for _, f := range h.Figures {
		if f.Key == key {
			return f.Value
		}
	}
	return figures.Unknown
}

// Fault is an injected fault, at a time since the run started.
type Fault struct {
	At   time.Duration
	What string // e.g. "killed member 2 (leader)"
}
