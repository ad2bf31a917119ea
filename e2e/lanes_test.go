package e2e

import (
	"flag"
	"sync"
	"testing"
)

// The tests here mostly wait: for ensembles to start, for loads to run
// their duration, for screens to show. One at a time they left the
// machine idle for much of make test, so tests that share nothing (each
// starts its own ensembles on free ports, in its own temporary
// directories, its terminal in a tmux server of its own) run side by side,
// three at a time, each in one of two lanes:
//
//   - terminalLane, one test at a time: the tests that judge a screen in
//     tmux, often against a live load, whose timing is the most
//     sensitive; they never overlap each other, as before.
//   - commandLane, two tests at a time, three once the terminal tests are
//     all done (each script of TestScripts is one): the rest.
//
// A test enters its lane with inLane(t, lane) as its first line. A test
// that changes the process's environment (t.Setenv) cannot run beside
// others: it stays sequential and runs before the lanes start, so tests
// give a command its variables with runZkherdEnv instead.
var (
	terminalLane = &lane{slots: make(chan struct{}, 1)}
	commandLane  = &lane{slots: make(chan struct{}, 3)}
)

// The command lane's third slot is the terminal lane's until its tests
// are done: the terminal tests run one after another, and first (they
// took 140-250 s here, the command tests 470 s of lane time), so they
// never wait for a command test's slot. Every test registers in
// inLane before any parallel test resumes (go test runs the sequential
// part of every test first), so the count is complete before it falls.
func init() {
	commandLane.slots <- struct{}{} // the terminal lane's, for now
	terminalLane.done = func() { <-commandLane.slots }
}

// lane is a number of slots; a test holds one while it runs. done, if
// set, runs once, when the tests registered in the lane have all ended.
type lane struct {
	slots    chan struct{}
	done     func()
	doneOnce sync.Once
	mu       sync.Mutex
	tests    int // registered, not ended
}

// inLane marks t parallel and waits for a slot in l, held until t ends.
func inLane(t *testing.T, l *lane) {
	t.Helper()
	l.mu.Lock()
	l.tests++
	l.mu.Unlock()
	t.Cleanup(l.ended)
	t.Parallel()
	l.enter()
	t.Cleanup(l.leave)
}

func (l *lane) ended() {
	l.mu.Lock()
	l.tests--
	last := l.tests == 0
	l.mu.Unlock()
	if last && l.done != nil {
		l.doneOnce.Do(l.done)
	}
}

func (l *lane) enter() { l.slots <- struct{}{} }
func (l *lane) leave() { <-l.slots }

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
