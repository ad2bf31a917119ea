package inspect

import "context"

// Helpers only the tests use, kept out of the binary.

// waitWalk waits for the walk in progress, if any, to end (tests, Close).
func (in *Inspector) waitWalk() { in.walker.wg.Wait() }

// warmUp takes snapshots until every member has been asked each costly
// command once (a start asks them one a poll, commandsFor): the next
// snapshot asks the watch lists when they are wanted.
func (in *Inspector) warmUp(ctx context.Context) {
	for range 20 {
		in.Snapshot(ctx)
		in.scanMu.Lock()
		done := true
		for i := range in.watches {
			done = done && in.watches[i].askedAll()
		}
		in.scanMu.Unlock()
		if done {
			return
		}
	}
}
