package recipes

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestServerConfigsCore runs the core case of each recipe against every
// server configuration of enstest.ServerConfigs other than the default
// (which every other test uses): a server that enforces no ACL, one whose
// digest algorithm clients do not compute, one that reaps empty containers
// within a second. Each case is small (a few seconds): mutual exclusion,
// token order and cleanup, not throughput.
func TestServerConfigsCore(t *testing.T) {
	for _, cfg := range enstest.ServerConfigs() {
		if cfg == (ensemble.ServerConfig{}) {
			continue
		}
		t.Run(cfg.String(), func(t *testing.T) {
			servers := configServers(t, cfg)
			t.Run("lock", func(t *testing.T) { coreLock(t, servers) })
			t.Run("rwlock", func(t *testing.T) { coreRWLock(t, servers) })
			t.Run("semaphore", func(t *testing.T) { coreSemaphore(t, servers) })
			t.Run("queue", func(t *testing.T) { coreQueue(t, servers) })
			t.Run("election", func(t *testing.T) { coreElection(t, servers) })
		})
	}
}

// runAll runs f for each of n goroutines and fails t with their errors.
func runAll(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	errs := make(chan result, n)
	for i := range n {
		go func() { errs <- result{i, f(i)} }()
	}
	for range n {
		if r := <-errs; r.err != nil {
			t.Errorf("worker %d: %v", r.who, r.err)
		}
	}
}

func coreLock(t *testing.T, servers []string) {
	const contenders, rounds = 6, 8
	path := testPath(t)
	ss := newSessions(t, contenders, servers)
	ctx := testCtx(t, 60*time.Second)
	var log grantLog
	runAll(t, contenders, func(i int) error {
		l := NewLock(ss[i], path)
		for range rounds {
			if err := l.Lock(ctx); err != nil {
				return fmt.Errorf("Lock: %w", err)
			}
			log.enter(l.Node(), l.FencingToken())
			if err := l.Unlock(ctx); err != nil {
				return fmt.Errorf("Unlock: %w", err)
			}
		}
		return nil
	})
	if n := log.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping critical sections, want 0", n)
	}
	for i := 1; i < len(log.tokens); i++ {
		if log.tokens[i] <= log.tokens[i-1] {
			t.Errorf("grant %d: token %d after %d", i, log.tokens[i], log.tokens[i-1])
			break
		}
	}
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

func coreRWLock(t *testing.T, servers []string) {
	const owners, rounds = 5, 6
	path := testPath(t)
	ss := newSessions(t, owners, servers)
	ctx := testCtx(t, 60*time.Second)
	var readers, writers, bad atomic.Int32
	runAll(t, owners, func(i int) error {
		rw := NewRWLock(ss[i], path)
		for r := range rounds {
			if (i+r)%3 == 0 {
				w := rw.WriteLock()
				if err := w.Lock(ctx); err != nil {
					return fmt.Errorf("write Lock: %w", err)
				}
				if writers.Add(1) != 1 || readers.Load() != 0 {
					bad.Add(1)
				}
				writers.Add(-1)
				if err := w.Unlock(ctx); err != nil {
					return fmt.Errorf("write Unlock: %w", err)
				}
				continue
			}
			rl := rw.ReadLock()
			if err := rl.Lock(ctx); err != nil {
				return fmt.Errorf("read Lock: %w", err)
			}
			readers.Add(1)
			if writers.Load() != 0 {
				bad.Add(1)
			}
			readers.Add(-1)
			if err := rl.Unlock(ctx); err != nil {
				return fmt.Errorf("read Unlock: %w", err)
			}
		}
		return nil
	})
	if n := bad.Load(); n != 0 {
		t.Errorf("%d times a writer was not alone, want 0", n)
	}
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

func coreSemaphore(t *testing.T, servers []string) {
	const leases, contenders, rounds = 2, 5, 4
	path := testPath(t)
	ss := newSessions(t, contenders, servers)
	ctx := testCtx(t, 60*time.Second)
	var inside, over atomic.Int32
	runAll(t, contenders, func(i int) error {
		sem := NewSemaphore(ss[i], path, leases)
		for range rounds {
			l, err := sem.Acquire(ctx)
			if err != nil {
				return fmt.Errorf("Acquire: %w", err)
			}
			if inside.Add(1) > leases {
				over.Add(1)
			}
			work(t, ss[i], path, 3)
			inside.Add(-1)
			if err := l.Release(ctx); err != nil {
				return fmt.Errorf("Release: %w", err)
			}
		}
		return nil
	})
	if n := over.Load(); n != 0 {
		t.Errorf("%d times more than %d holders, want 0", n, leases)
	}
	for _, dir := range []string{SemaphoreLeases, SemaphoreLocks} {
		if left := children(t, ss[0], joinPath(path, dir)); len(left) != 0 {
			t.Errorf("nodes left in %s: %q", dir, left)
		}
	}
}

// coreQueue consumes one queue with two Take consumers and another with
// two Claim consumers (a queue is consumed one way: see Queue).
func coreQueue(t *testing.T, servers []string) {
	const items = 15
	base := testPath(t)
	ss := newSessions(t, 5, servers)
	ctx := testCtx(t, 60*time.Second)
	paths := []string{base + "/take", base + "/claim"}
	for _, path := range paths {
		producer := NewQueue(ss[0], path)
		for i := range items {
			if _, err := producer.Put(ctx, fmt.Appendf(nil, "%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var (
		mu   sync.Mutex
		seen = [2]map[string]int{{}, {}}
		took [2]atomic.Int32
	)
	runAll(t, 4, func(i int) error {
		k := i / 2 // 0: take, 1: claim
		q := NewQueue(ss[1+i], paths[k])
		for took[k].Add(1) <= items {
			var data []byte
			if k == 0 {
				d, err := q.Take(ctx)
				if err != nil {
					return fmt.Errorf("Take: %w", err)
				}
				data = d
			} else {
				c, err := q.Claim(ctx)
				if err != nil {
					return fmt.Errorf("Claim: %w", err)
				}
				if err := c.Ack(ctx); err != nil {
					return fmt.Errorf("Ack: %w", err)
				}
				data = c.Data
			}
			mu.Lock()
			seen[k][string(data)]++
			mu.Unlock()
		}
		return nil
	})
	for k, path := range paths {
		for i := range items {
			if n := seen[k][fmt.Sprint(i)]; n != 1 {
				t.Errorf("%s: item %d consumed %d times, want 1", path, i, n)
			}
		}
		if left := children(t, ss[0], path); len(left) != 0 {
			t.Errorf("nodes left in %s: %q", path, left)
		}
	}
}

func coreElection(t *testing.T, servers []string) {
	const candidates, terms = 4, 2
	path := testPath(t)
	ss := newSessions(t, candidates, servers)
	ctx := testCtx(t, 60*time.Second)
	var leading, overlaps atomic.Int32
	var last atomic.Uint64
	var regress atomic.Int32
	runAll(t, candidates, func(i int) error {
		e := NewElection(ss[i], path)
		for range terms {
			if err := e.Campaign(ctx, fmt.Appendf(nil, "%d", i)); err != nil {
				return fmt.Errorf("Campaign: %w", err)
			}
			if leading.Add(1) != 1 {
				overlaps.Add(1)
			}
			if tok := e.FencingToken(); tok <= last.Load() {
				regress.Add(1)
			} else {
				last.Store(tok)
			}
			leading.Add(-1)
			if err := e.Resign(ctx); err != nil {
				return fmt.Errorf("Resign: %w", err)
			}
		}
		return nil
	})
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d times two leaders, want 0", n)
	}
	if n := regress.Load(); n != 0 {
		t.Errorf("%d terms with a token not above the last, want 0", n)
	}
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}
