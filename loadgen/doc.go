// Package loadgen runs a load scenario against a ZooKeeper ensemble: it
// opens one session per simulated client at a controlled rate, drives a
// recipe (fair lock, herd locks, read/write lock, semaphore, queue,
// election, barrier) according to the scenario's arrival model and hold
// times, records every phase in HdrHistograms (package metrics), measures
// the herd effect, and checks correctness while it runs.
//
// Every run works under its own namespace, /zkherd/runs/<id>, touches
// nothing outside it, and removes it at the end, also when ctx is
// cancelled: then the run stops gracefully (waiters give up and delete
// their nodes, holders release) and its Result is marked Partial.
//
// Measurements come from three places, none of them a hook in the recipes:
//   - the recipe calls themselves (acquire, hold, release, handoff, queue
//     and barrier phases), timed by the client loops;
//   - a wire tap on each client's TCP connection, which reads the
//     ZooKeeper protocol as it passes and times every request (create,
//     get_children, watch_set, delete), counts requests by kind, and turns
//     watch notifications into notification lags;
//   - the servers' own counters (mntr) read before and after the run from
//     every member, for server packets and watch fan-out per acquisition.
//
// Checks (mutual exclusion with fencing tokens, FIFO order of the fair
// lock, semaphore limit, single leader, queue items exactly once, no
// znode left behind) fail the run: Result.Checks.Passed is false and every
// violation is listed.
//
// A run of 2,000 sessions or more keeps a soft memory limit on the
// process (runtime/debug.SetMemoryLimit) derived from what is live, so
// that freed memory goes back to the OS (memlimit.go); a limit the caller
// set (GOMEMLIMIT) is left alone.
package loadgen
