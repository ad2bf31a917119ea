// Package launch starts the other processes of a distributed load run
// (zkherd load --join) for the process that starts it, streams their
// output line by line with a prefix, and stops them on every way out:
// the run's end, an error, the starter's context cancelled (Ctrl-C,
// SIGTERM), and the starter itself killed.
//
// Two launchers: Local starts them on this machine (zkherd load --spawn),
// SSH on other hosts over ssh (zkherd load --hosts). Both hand back a
// Group, the one owner of the processes it started.
package launch
