// Package loadrun is the application layer of zkherd load and zkherd demo:
// everything between the command line's flags and the load generator.
//
//   - A Plan is a scenario with the user's overrides applied and checked,
//     and the report directory checked before anything starts (plan.go).
//   - A Target is where runs go: the ONE place that starts a local
//     ensemble or checks the servers given (target.go).
//   - Execute runs a plan's runs in turn on an open target, reporting
//     progress and notices to a Sink (execute.go); a plain run, a sweep
//     (sweep.go) and a distributed run (distrib.go) are modes that call it.
//   - Finish builds the report, prints the summary, writes the report
//     directory and classifies the exit (finish.go).
//
// Every error a user should read is an *exit.Error carrying its status.
package loadrun
