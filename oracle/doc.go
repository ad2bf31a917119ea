// Package oracle records what a load run's clients did and checks the
// history afterwards for linearizability with porcupine, one sequential
// model per recipe: an independent reading of the run, apart from the
// online checks in loadgen.
//
// A run records one fixed-size Op per operation into a Buffer per client
// (no lock on the hot path), merged into a History when the clients have
// stopped. Check splits the history by partition (lock path, queue item,
// barrier round), feeds each to porcupine with a time bound, and says
// "unknown" for a partition it could not finish, never ok.
//
// Outcomes follow Jepsen: an operation whose outcome is unknown (:info)
// may or may not have taken effect; porcupine sees it as never returning.
// history.jsonl (WriteJSONL) writes Jepsen's op maps, one per line.
package oracle
