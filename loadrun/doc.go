// Package loadrun is the application layer of zkherd load and zkherd demo:
// everything between the command line's flags and the load generator.
//
//   - A Plan is a scenario with the user's overrides applied and checked,
//     and the report directory checked before anything starts (plan.go).
//   - A Target is where runs go: the ONE place that starts a local
//     ensemble or checks the servers given (target.go).
//   - A Request is the values the user gave; Prepare checks them and
//     makes a Job, which Runner.Do runs: the one dispatch between a plain
//     run, a sweep (sweep.go), a search (findmax.go) and a distributed run
//     (distrib.go), which all run their plans' runs through execution
//     (execute.go).
//   - What a run says while it goes flows one way, as events (events.go):
//     Runner.Subscribe gives each reader a channel the Runner owns and
//     closes; the dashboard, the progress line (PrintProgress), the JSON
//     stream (StreamSink) and the metrics endpoint read it, and nothing
//     they do reaches back into the run (they stop it by its context).
//   - Finish builds the report, prints the summary, writes the report
//     directory and classifies the exit (finish.go).
//
// Every error a user should read is an *exit.Error carrying its status.
package loadrun
