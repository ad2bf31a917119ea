package inspect

// Helpers only the tests use, kept out of the binary.

// waitWalk waits for the walk in progress, if any, to end (tests, Close).
func (in *Inspector) waitWalk() { in.walker.wg.Wait() }
