// Package distrib spreads one load run over several zkherd processes,
// with ZooKeeper itself as the coordinator: there is no other server.
//
// The process that starts a distributed run (Start) writes its plan, the
// scenario runs and the number of processes, to the run's node
// /zkherd/runs/<id>. The others find it by its id (Join). For each run of
// the plan every process waits at a barrier (the recipes package's) until
// all have arrived, runs the scenario with its own clients in a namespace
// they share, so that all of them contend for the same locks, and
// publishes its results as a Part under the run's node: compressed
// histograms (HdrHistogram's V2 encoding), counters, checks and events.
// The starting process collects every Part and merges them (Merge): the
// histograms exactly, bucket by bucket, the counters by adding them up.
// It then removes the run's node, leaving nothing behind.
//
// Layout under /zkherd/runs/<id>:
//
//	(data)              the plan, as JSON, with the run's state
//	members/m-<seq>     one ephemeral node per process; the order gives each its number
//	steps/<k>/barrier   where the processes meet before run k
//	steps/<k>/work      the namespace run k's clients share
//	steps/<k>/parts/p-<n>  process n's results for run k
package distrib

import "github.com/zkherd/zkherd/internal/pkgerr"

// marked marks *err as this package's (see pkgerr): every exported
// function that returns an error defers it.
func marked(err *error) { *err = pkgerr.Wrap("distrib", *err) }
