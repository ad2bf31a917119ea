package loadgen

import "github.com/zkherd/zkherd/metrics"

// Phases returns every phase a run can record: metrics' built-in phases
// and the workloads' own. A threshold on any other phase names a figure
// no run has, and is refused before the run starts.
func Phases() []metrics.Phase {
	return append(metrics.Phases(), ReadAcquire, WriteAcquire, BarrierLeave)
}
