package loadgen

import (
	"context"
	"math"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

func TestMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                         string
		mapped, heap, live, scanRest uint64
		want                         int64
	}{
		// 10,000 sessions: 230 MiB of stacks and runtime memory, 165 MiB
		// live, 60 MiB of stacks in use: 230 + 165 + 0.75*225 + 32.
		{"ten thousand sessions", 680 * mib, 450 * mib, 165 * mib, 60 * mib, 595*mib + 768*1024},
		{"nothing live", 10 * mib, 0, 0, 0, 42 * mib},
		// A heap figure above the mapped one (samples are not taken
		// atomically) must not wrap around.
		{"heap above mapped", 100 * mib, 120 * mib, 50 * mib, 0, 50*mib + 37*mib + 512*1024 + 32*mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := memoryLimit(tc.mapped, tc.heap, tc.live, tc.scanRest); got != tc.want {
				t.Errorf("memoryLimit = %d MiB (%d), want %d MiB (%d)", got/mib, got, tc.want/mib, tc.want)
			}
		})
	}
}

// TestGovernMemory: a run of many sessions sets a limit and puts the
// previous one back; a small run, or a limit the caller set, is left alone.
func TestGovernMemory(t *testing.T) {
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Skipf("a memory limit is set (%d): GOMEMLIMIT?", got)
	}
	stop := governMemory(memLimitMinClients)
	if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 {
		t.Errorf("limit during a run of %d sessions = none, want one", memLimitMinClients)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit after the run = %d, want none", got)
	}

	stop = governMemory(memLimitMinClients - 1)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit during a run of %d sessions = %d, want none", memLimitMinClients-1, got)
	}
	stop()

	const callers = 1 << 40
	debug.SetMemoryLimit(callers)
	defer debug.SetMemoryLimit(math.MaxInt64)
	stop = governMemory(10_000)
	if got := debug.SetMemoryLimit(-1); got != callers {
		t.Errorf("limit with the caller's in place = %d, want the caller's %d", got, int64(callers))
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != callers {
		t.Errorf("limit after the run = %d, want the caller's %d", got, int64(callers))
	}
}

// TestRunGovernsMemory: a run holds the limit once its sessions are open
// and puts none back when it returns (the governor's goroutine ends:
// TestMain's leak check).
func TestRunGovernsMemory(t *testing.T) {
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Skipf("a memory limit is set (%d): GOMEMLIMIT?", got)
	}
	defer func(n int) { memLimitMinClients = n }(memLimitMinClients)
	memLimitMinClients = 4
	ens := enstest.Start(t, 1)
	var mu sync.Mutex
	governed := false
	res, err := Run(context.Background(), shortRun(t, "fair-lock", 4, 1500*time.Millisecond), Options{
		Servers:  ens.Servers(),
		Interval: 250 * time.Millisecond,
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.State == "running" && debug.SetMemoryLimit(-1) != math.MaxInt64 {
				governed = true
			}
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Checks.Passed {
		t.Errorf("checks failed: %v", res.Checks.Violations)
	}
	mu.Lock()
	defer mu.Unlock()
	if !governed {
		t.Errorf("no memory limit while the run's %d sessions were open, want one", 4)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit after the run = %d, want none", got)
	}
}
