package loadgen

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// A run with thousands of sessions holds a large, steady live heap (each
// idle session's buffers and recipe state, issue 13) and as much again in
// goroutine stacks. The Go runtime's default pacing (GOGC=100) lets the
// heap grow to twice what the last GC kept before collecting, and returns
// freed pages to the OS only slowly: at 10,000 sessions the peak RSS was
// 660-760 MiB, of which 100-270 MiB were free heap pages not yet returned
// and 200 MiB stacks.
//
// The memory governor, a documented choice: once every session of a run
// of at least memLimitMinClients sessions is open (not while they open:
// each opening leaves go-zookeeper's 1.5 MiB of garbage, and with a limit
// the runtime returns those freed pages to the OS only for the next
// opening to fault them in again: with the limit from the start, 5,000
// contenders took 16 s of CPU against 13 s without, in two pairs of
// runs, with as many collections), and only when nobody set a limit
// (GOMEMLIMIT or debug.SetMemoryLimit), it keeps a soft memory limit
// (debug.SetMemoryLimit) derived from the run as it goes: the memory the
// GC does not manage (stacks, runtime metadata), plus the live heap, plus
// memLimitGrowth percent of what the GC scans (live heap, stacks in use,
// globals; GOGC counts the same), plus memLimitSlack. The runtime then
// collects a little earlier than GOGC=100 would (at most 100/memLimitGrowth
// as many collections) and returns free pages to the OS as soon as the
// total passes the limit. The limit follows the live heap (re-derived
// every memLimitPeriod), so a run whose live heap grows (listing storms,
// the dashboard) is never held to a figure from its start; it never
// falls below what the last GC kept, so it cannot spiral into collecting
// all the time. When a caller's limit is in place, or another run in the
// process is governed, the run is left alone. The previous limit is back
// when the run returns.
// memLimitMinClients: below it the process is under ~150 MiB and trading
// GC work for memory is not worth it. A variable only for
// TestRunGovernsMemory, which runs a few sessions.
var memLimitMinClients = 2000

const (
	// memLimitGrowth is the heap growth allowed over the scanned memory
	// (GOGC's is 100).
	memLimitGrowth = 75
	// memLimitSlack covers the heap's fragmentation and the growth between
	// two derivations.
	memLimitSlack  = 32 << 20
	memLimitPeriod = 250 * time.Millisecond
)

// governing is set while a run's governor holds the process's limit.
var (
	governMu  sync.Mutex
	governing bool
)

// governMemory starts the memory governor for a run of clients sessions;
// the returned function stops it and restores the previous limit.
func governMemory(clients int) (stop func()) {
	if clients < memLimitMinClients {
		return func() {}
	}
	governMu.Lock()
	defer governMu.Unlock()
	if governing || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	governing = true
	debug.SetMemoryLimit(derivedMemoryLimit())
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(memLimitPeriod)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				debug.SetMemoryLimit(derivedMemoryLimit())
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(quit)
		<-done
		governMu.Lock()
		defer governMu.Unlock()
		debug.SetMemoryLimit(math.MaxInt64)
		governing = false
	})
}

// memSamples are the runtime figures derivedMemoryLimit reads.
var memSamples = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/gc/heap/live:bytes",
	"/gc/scan/stack:bytes",
	"/gc/scan/globals:bytes",
}

// derivedMemoryLimit is the governor's limit for the process as it is now.
func derivedMemoryLimit() int64 {
	s := make([]metrics.Sample, len(memSamples))
	for i, n := range memSamples {
		s[i].Name = n
	}
	metrics.Read(s)
	v := func(i int) uint64 { return s[i].Value.Uint64() }
	return memoryLimit(v(0)-v(1), v(2)+v(3)+v(4), v(5), v(6)+v(7))
}

// memoryLimit derives the limit from the memory the runtime holds from
// the OS (mapped), the heap's part of it, the live heap and the stacks and
// globals the GC scans. Pure, for the tests.
func memoryLimit(mapped, heap, live, scanOther uint64) int64 {
	unmanaged := mapped - min(heap, mapped) // stacks, metadata, buffers of the runtime
	grow := (live + scanOther) * memLimitGrowth / 100
	return int64(unmanaged + live + grow + memLimitSlack)
}
