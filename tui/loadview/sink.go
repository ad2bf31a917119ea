package loadview

import (
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
)

// Sink turns a load run's reports (it is a loadrun.Sink) into snapshots
// of Feed sent on Updates, for the dashboard to draw.
type Sink struct {
	Feed    *Feed
	Updates chan<- Snapshot
}

// Starting sends the snapshot of run i starting.
func (s Sink) Starting(i int, _ scenarios.Run, _ string) { s.Updates <- s.Feed.Starting(i) }

// Progress sends the snapshot of a progress report.
func (s Sink) Progress(p loadgen.Progress) { s.Updates <- s.Feed.Progress(p) }

// Notice adds a line to the next snapshot.
func (s Sink) Notice(line string) { s.Feed.Notice(line) }

// LiveDetail asks for what the dashboard draws beyond the progress line
// (loadgen.Options.ProgressPhases).
func (Sink) LiveDetail() bool { return true }
