package e2e

import (
	"flag"
	"testing"
)

// The tests here mostly wait: for ensembles to start, for loads to run
// their duration, for screens to show. One at a time they left the
// machine idle for much of make test, so tests that share nothing (each
// starts its own ensembles on free ports, in its own temporary
// directories, its terminal in a tmux server of its own) run side by side,
// each in one of two lanes:
//
//   - terminalLane, one test at a time: the tests that judge a screen in
//     tmux, often against a live load, whose timing is the most
//     sensitive; they never overlap each other, as before.
//   - commandLane, commandLaneWidth tests at a time (each script of
//     TestScripts is one): the rest.
//
// A test enters its lane with inLane(t, lane) as its first line. A test
// that changes the process's environment (t.Setenv) cannot run beside
// others: it stays sequential and runs before the lanes start, so tests
// give a command its variables with runZkherdEnv instead.
var (
	terminalLane = make(lane, 1)
	commandLane  = make(lane, commandLaneWidth)
)

// commandLaneWidth: two, as go test's -parallel on this 2-core machine,
// beside the terminal lane: measured in docs/BENCHMARKS.md ("make test's
// time against issue 20's ...").
const commandLaneWidth = 2

// lane is a number of slots; a test holds one while it runs.
type lane chan struct{}

// inLane marks t parallel and waits for a slot in l, held until t ends.
func inLane(t *testing.T, l lane) {
	t.Helper()
	t.Parallel()
	l.enter()
	t.Cleanup(l.leave)
}

func (l lane) enter() { l <- struct{}{} }
func (l lane) leave() { <-l }

// liftParallel sets go test's -parallel (which defaults to GOMAXPROCS) out
// of the way unless it was given: the lanes bound how many tests run at
// once, and a test waiting for its lane would otherwise hold one of
// -parallel's slots while it waits. A -parallel given on the command line
// still bounds the whole package (-parallel 1: one test at a time).
func liftParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return
	}
	if err := flag.Set("test.parallel", "1000"); err != nil {
		panic(err)
	}
}
