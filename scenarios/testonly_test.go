package scenarios

import "time"

// Helpers only the tests use, kept out of the binary.

// Pace waits until session opened (0-based) is due, and stops once Clients
// are open.
func (r Ramp) Pace(elapsed time.Duration, opened uint64) (time.Duration, bool) {
	if r.Clients < 0 || opened >= uint64(r.Clients) {
		return 0, true
	}
	return max(r.At(int(opened))-elapsed, 0), false
}

// FirstStart returns when client i's first operation of a stampede or
// closed loop starts, from the opening of the first session: a closed-loop
// client starts as soon as its session opens, a stampede starts every
// client when the last session has opened. Open-loop clients follow their
// pacer instead; FirstStart returns the ramp's end for them, when the
// schedule starts.
func FirstStart(kind ArrivalKind, ramp Ramp, i int) time.Duration {
	if kind == Closed {
		return ramp.At(i)
	}
	return ramp.Done()
}
