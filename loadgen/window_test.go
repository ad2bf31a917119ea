package loadgen

import (
	"strings"
	"testing"
	"time"
)

// TestWindowStartMonotonic: an open-loop run's latency is measured from
// each arrival's intended start, the window's start plus its offset. The
// window's start used to be kept as UnixNano, which drops the monotonic
// clock reading: done.Sub(intended) then compared wall clocks, and a small
// step back of the system clock recorded a negative latency ("1 negative
// (recorded as 0)" in a --rate 300 run). It must keep its monotonic reading.
func TestWindowStartMonotonic(t *testing.T) {
	r := &runner{windowOpen: make(chan struct{})}
	at := time.Now()
	r.openWindow(at)
	ws := r.windowStartTime()
	if !ws.Equal(at) {
		t.Fatalf("window start %v, want %v", ws, at)
	}
	intended := ws.Add(3 * time.Millisecond) // as dispatch makes an arrival's intended start
	if got := intended.String(); !strings.Contains(got, " m=") {
		t.Errorf("intended start %q has no monotonic clock reading: latencies from it follow the wall clock", got)
	}
}
