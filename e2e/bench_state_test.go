package e2e

// The production-sized state the inspector benchmarks build, and the
// other clients whose writes they time.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

type prodState struct{ conns []*zk.Conn }

func (s *prodState) close() {
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// buildProductionState creates the znodes, sessions, ephemerals, watches
// and locks.
func buildProductionState(ctx context.Context, b *testing.B, servers []string) *prodState {
	admin, err := benchConnect(ctx, servers, 8<<20)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	acl := zk.WorldACL(zk.PermAll)
	// Persistent nodes: the directories first, then the leaves in multis
	// of 500, four at a time.
	var dirs, leaves []string
	dirs = append(dirs, "/bench", "/bench/cfg", "/bench/data", "/bench/big", "/bench/svc", "/bench/locks", "/bench/w")
	for a := range 100 {
		dirs = append(dirs, fmt.Sprintf("/bench/cfg/app-%02d", a))
		for k := range 1000 {
			leaves = append(leaves, fmt.Sprintf("/bench/cfg/app-%02d/key-%03d", a, k))
		}
	}
	for d := range 90 {
		dirs = append(dirs, fmt.Sprintf("/bench/data/d-%02d", d))
		for n := range 1000 {
			leaves = append(leaves, fmt.Sprintf("/bench/data/d-%02d/n-%03d", d, n))
		}
	}
	for c := range 10000 {
		leaves = append(leaves, fmt.Sprintf("/bench/big/c-%05d", c))
	}
	for s := range 1000 {
		leaves = append(leaves, fmt.Sprintf("/bench/svc/s-%03d", s))
	}
	for l := range 20 {
		leaves = append(leaves, fmt.Sprintf("/bench/locks/l-%02d", l))
	}
	for k := range 10 {
		leaves = append(leaves, fmt.Sprintf("/bench/w/k-%d", k))
	}
	data := []byte(`{"value":"0123456789abcdef","v":1}`)
	for _, p := range dirs {
		if _, err := admin.Create(p, data, 0, acl); err != nil {
			b.Fatalf("create %s: %v", p, err)
		}
	}
	const batch = 500
	var bwg sync.WaitGroup
	bsem := make(chan struct{}, 4)
	var berr error
	var bmu sync.Mutex
	for i := 0; i < len(leaves); i += batch {
		ops := make([]any, 0, batch)
		for _, p := range leaves[i:min(i+batch, len(leaves))] {
			ops = append(ops, &zk.CreateRequest{Path: p, Data: data, Acl: acl})
		}
		bwg.Add(1)
		bsem <- struct{}{}
		go func() {
			defer bwg.Done()
			defer func() { <-bsem }()
			if _, err := admin.Multi(ops...); err != nil {
				bmu.Lock()
				berr = err
				bmu.Unlock()
			}
		}()
	}
	bwg.Wait()
	if berr != nil {
		b.Fatalf("create: %v", berr)
	}
	// 2,000 sessions, opened 50 at a time, with small receive buffers.
	st := &prodState{conns: make([]*zk.Conn, 2000)}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	var mu sync.Mutex
	var firstErr error
	for i := range st.conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := benchConnect(ctx, servers, 256<<10)
			if err == nil {
				st.conns[i] = c
				// Two registrations each: 4,000 ephemerals in 1,000 directories.
				for r := range 2 {
					if _, err = c.Create(fmt.Sprintf("/bench/svc/s-%03d/i-%d", i/2, i%2*2+r), nil, zk.FlagEphemeral, acl); err != nil {
						break
					}
				}
			}
			// 50 data watches each on config keys, four sessions per key.
			for j := 0; err == nil && j < 50; j++ {
				k := (i*50 + j) % 25000
				_, _, _, err = c.GetW(fmt.Sprintf("/bench/cfg/app-%02d/key-%03d", k/1000%100, k%1000))
			}
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatalf("sessions: %v", firstErr)
	}
	// 20 lock directories, 5 contenders each in Curator's layout, each
	// waiter watching its predecessor.
	for l := range 20 {
		var prev string
		for k := range 5 {
			c := st.conns[l*5+k]
			name, err := c.Create(fmt.Sprintf("/bench/locks/l-%02d/_c_%s-lock-", l, uuid.NewString()), nil, zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				b.Fatal(err)
			}
			if prev != "" {
				if _, _, _, err := c.ExistsW(prev); err != nil {
					b.Fatal(err)
				}
			}
			prev = name
		}
	}
	return st
}

// writer is the other clients: sessions that set data at a steady rate,
// recording each call's latency.
type writer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per session
	mu     sync.Mutex
	lat    []time.Duration
	at     []time.Time // when each write in lat started
}

// startWriters starts n sessions setting data perSec times a second in
// all, each at its own pace (perSec/n), so that a p99 may rest on more
// writes than one session sends.
func startWriters(ctx context.Context, servers []string, n, perSec int) *writer {
	ctx, cancel := context.WithCancel(ctx)
	w := &writer{cancel: cancel}
	for s := range n {
		c, err := benchConnect(ctx, servers, 1<<20)
		if err != nil {
			panic(err)
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer c.Close()
			w.run(ctx, c, s, time.Second*time.Duration(n)/time.Duration(perSec))
		}()
	}
	return w
}

// run sets data every period on c until ctx ends.
func (w *writer) run(ctx context.Context, c *zk.Conn, session int, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	// Four in flight at most, so that one slow reply does not stop the pace.
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 0; ; i++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		select {
		case sem <- struct{}{}:
		default:
			continue // all four busy: the tick is missed, not queued
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t := time.Now()
			if _, err := c.Set(fmt.Sprintf("/bench/w/k-%d", (session+i)%10), []byte(strconv.Itoa(i)), -1); err != nil {
				return
			}
			d := time.Since(t)
			w.mu.Lock()
			w.lat = append(w.lat, d)
			w.at = append(w.at, t)
			w.mu.Unlock()
		}()
	}
}

func (w *writer) reset() {
	w.mu.Lock()
	w.lat, w.at = w.lat[:0], w.at[:0]
	w.mu.Unlock()
}

// slowest says when the window's slowest 1% of writes started, as
// "second:count" pairs from the window's start: a tail that follows a
// period points at what runs on that period.
func (w *writer) slowest(t0 time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lat) == 0 {
		return ""
	}
	idx := make([]int, len(w.lat))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(w.lat[b], w.lat[a]) })
	counts := map[int]int{}
	for _, i := range idx[:max(1, len(idx)/100)] {
		counts[int(w.at[i].Sub(t0).Seconds())]++
	}
	secs := slices.Sorted(maps.Keys(counts))
	var sb strings.Builder
	for _, sec := range secs {
		fmt.Fprintf(&sb, " %d:%d", sec, counts[sec])
	}
	return strings.TrimSpace(sb.String())
}

// write saves the window's writes to file: start (Unix nanoseconds) and
// latency (nanoseconds), one a line.
func (w *writer) write(file string) error {
	w.mu.Lock()
	var sb strings.Builder
	for i, d := range w.lat {
		fmt.Fprintf(&sb, "%d %d\n", w.at[i].UnixNano(), d.Nanoseconds())
	}
	w.mu.Unlock()
	return os.WriteFile(file, []byte(sb.String()), 0o644)
}

// percentiles returns the window's latencies (a copy), their p50 and p99.
func (w *writer) percentiles() (lat []time.Duration, p50, p99 time.Duration) {
	w.mu.Lock()
	lat = slices.Clone(w.lat)
	w.mu.Unlock()
	p50, p99 = durationPercentiles(lat)
	return lat, p50, p99
}

// durationPercentiles returns the p50 and p99 of s (zero when empty).
func durationPercentiles(s []time.Duration) (p50, p99 time.Duration) {
	if len(s) == 0 {
		return 0, 0
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100]
}

func (w *writer) stop() {
	w.cancel()
	w.wg.Wait()
}
