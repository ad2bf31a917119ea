package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// queued is one test item: who put it and its rank among that producer's.
type queued struct{ producer, n int }

func (q queued) data() []byte { return fmt.Appendf(nil, "%d %d", q.producer, q.n) }

func parseQueued(data []byte) (queued, error) {
	var q queued
	_, err := fmt.Sscanf(string(data), "%d %d", &q.producer, &q.n)
	return q, err
}

// TestQueueProducersConsumers is issue 3 item 12: 4 producers put 5,000
// items each while 4 consumers take, each its own session. Every item is
// taken exactly once, and each consumer sees each producer's items in the
// order they were put (each producer puts from one goroutine, so its order
// is defined; a consumer takes lowest sequence first).
func TestQueueProducersConsumers(t *testing.T) {
	const producers, consumers, perProducer = 4, 4, 5000
	const total = producers * perProducer
	servers := sharedServers(t)
	path := testPath(t)
	// Consumers list the whole queue: let a listing of all the items fit.
	ss := append(newSessions(t, producers, servers),
		newSessions(t, consumers, servers, WithBufferSizes(DefaultBufferSize, 4<<20))...)
	ctx := testCtx(t, 150*time.Second)
	consumeCtx, stop := context.WithCancel(ctx)
	defer stop()

	start := time.Now()
	errs := make(chan result, producers+consumers)
	for p := range producers {
		go func() {
			q := NewQueue(ss[p], path)
			for n := range perProducer {
				if _, err := q.Put(ctx, queued{p, n}.data()); err != nil {
					errs <- result{p, fmt.Errorf("Put: %w", err)}
					return
				}
			}
			errs <- result{p, nil}
		}()
	}
	var taken atomic.Int64
	got := make([][]queued, consumers) // each consumer's, in take order
	for c := range consumers {
		go func() {
			who := producers + c
			q := NewQueue(ss[who], path)
			for {
				data, err := q.Take(consumeCtx)
				if err != nil {
					if errors.Is(err, context.Canceled) && taken.Load() == total {
						err = nil // stopped after the last item
					}
					errs <- result{who, err}
					return
				}
				item, err := parseQueued(data)
				if err != nil {
					errs <- result{who, fmt.Errorf("item %q: %w", data, err)}
					return
				}
				got[c] = append(got[c], item)
				if taken.Add(1) == total {
					stop()
				}
			}
		}()
	}
	for range producers + consumers {
		if r := <-errs; r.err != nil {
			t.Errorf("participant %d: %v", r.who, r.err)
		}
	}
	t.Logf("%d items through the queue in %v", taken.Load(), time.Since(start).Round(time.Millisecond))

	seen := make(map[queued]int)
	for c, items := range got {
		last := make(map[int]int) // producer -> last n this consumer took
		for _, it := range items {
			seen[it]++
			if prev, ok := last[it.producer]; ok && it.n <= prev {
				t.Errorf("consumer %d took producer %d's item %d after its item %d: not FIFO", c, it.producer, it.n, prev)
			}
			last[it.producer] = it.n
		}
		t.Logf("consumer %d took %d items", c, len(items))
	}
	for p := range producers {
		for n := range perProducer {
			if k := seen[queued{p, n}]; k != 1 {
				t.Errorf("producer %d's item %d taken %d times, want 1", p, n, k)
			}
		}
	}
	if len(seen) != total {
		t.Errorf("%d distinct items taken, want %d", len(seen), total)
	}
	if n, err := NewQueue(ss[0], path).Len(ctx); err != nil || n != 0 {
		t.Errorf("Len after all taken = %d, %v; want 0, nil", n, err)
	}
}

// TestQueueLockSafe is item 12's lock-safe part: a consumer whose session
// ends while it holds a claimed item loses nothing; the item is not taken
// by anyone else while the claim lives, and is processed once it is gone.
func TestQueueLockSafe(t *testing.T) {
	const items, consumers, killAfter = 300, 3, 50
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, consumers+1, servers)
	victimS := newTestSession(t, servers)
	ctx := testCtx(t, 90*time.Second)
	consumeCtx, stop := context.WithCancel(ctx)
	defer stop()

	producer := NewQueue(ss[consumers], path)
	for n := range items {
		if _, err := producer.Put(ctx, queued{0, n}.data()); err != nil {
			t.Fatal(err)
		}
	}
	victimClaim, err := NewQueue(victimS, path).Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victimItem, _ := parseQueued(victimClaim.Data)
	if victimItem.n != 0 {
		t.Errorf("first claim got item %d, want the head, 0", victimItem.n)
	}

	var (
		victimGone atomic.Bool
		early      atomic.Int32 // victim's item processed while its claim lived
		mu         sync.Mutex
		acked      = make(map[queued]int)
		killNow    = make(chan struct{})
		killOnce   sync.Once
	)
	errs := make(chan result, consumers)
	for c := range consumers {
		go func() {
			q := NewQueue(ss[c], path)
			for {
				cl, err := q.Claim(consumeCtx)
				if err != nil {
					if errors.Is(err, context.Canceled) {
						err = nil
					}
					errs <- result{c, err}
					return
				}
				it, err := parseQueued(cl.Data)
				if err != nil {
					errs <- result{c, err}
					return
				}
				if it == victimItem && !victimGone.Load() {
					early.Add(1)
				}
				if err := cl.Ack(consumeCtx); err != nil {
					errs <- result{c, fmt.Errorf("Ack: %w", err)}
					return
				}
				mu.Lock()
				acked[it]++
				n := len(acked)
				mu.Unlock()
				if n >= killAfter {
					killOnce.Do(func() { close(killNow) })
				}
				if n == items {
					stop()
				}
			}
		}()
	}
	select {
	case <-killNow:
	case <-ctx.Done():
		t.Fatalf("consumers never processed %d items", killAfter)
	}
	// The victim dies mid-item: claimed, not acknowledged.
	victimGone.Store(true)
	victimS.Close()
	for range consumers {
		if r := <-errs; r.err != nil {
			t.Errorf("consumer %d: %v", r.who, r.err)
		}
	}

	if n := early.Load(); n != 0 {
		t.Errorf("the victim's item was claimed %d times while the victim's claim lived", n)
	}
	for n := range items {
		if k := acked[queued{0, n}]; k != 1 {
			t.Errorf("item %d acknowledged %d times, want 1", n, k)
		}
	}
	if err := victimClaim.Ack(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("the dead victim's Ack = %v, want %v", err, ErrLost)
	}
	if left := children(t, ss[0], path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

func TestQueueFIFOAndBlocking(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ss := newSessions(t, 2, servers)
	ctx := testCtx(t, 30*time.Second)
	producer, consumer := NewQueue(ss[0], path), NewQueue(ss[1], path)

	t.Run("take on an empty queue waits until ctx ends", func(t *testing.T) {
		waitCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		if data, err := consumer.Take(waitCtx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Take on an empty queue = %q, %v; want %v", data, err, context.DeadlineExceeded)
		}
	})
	t.Run("a waiting take gets the next put", func(t *testing.T) {
		got := make(chan []byte, 1)
		go func() {
			data, err := consumer.Take(ctx)
			if err != nil {
				data = []byte("error: " + err.Error())
			}
			got <- data
		}()
		// The Take usually waits on the children watch by now; if not, it
		// finds the item listed. Either way it must get it.
		if _, err := producer.Put(ctx, []byte("late")); err != nil {
			t.Fatal(err)
		}
		if data := <-got; string(data) != "late" {
			t.Errorf("Take = %q, want %q", data, "late")
		}
	})
	t.Run("first in, first out", func(t *testing.T) {
		want := []string{"a", "b", "c", "d"}
		for _, w := range want {
			if _, err := producer.Put(ctx, []byte(w)); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := consumer.Len(ctx); err != nil || n != len(want) {
			t.Errorf("Len = %d, %v; want %d, nil", n, err, len(want))
		}
		for _, w := range want {
			data, err := consumer.Take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != w {
				t.Errorf("Take = %q, want %q", data, w)
			}
		}
	})
	t.Run("a released claim is claimed again", func(t *testing.T) {
		if _, err := producer.Put(ctx, []byte("x")); err != nil {
			t.Fatal(err)
		}
		first, err := consumer.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := first.Release(ctx); err != nil {
			t.Fatal(err)
		}
		second, err := NewQueue(ss[0], path).Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if second.Item() != first.Item() {
			t.Errorf("claim after release got %s, want %s again", second.Item(), first.Item())
		}
		if err := second.Ack(ctx); err != nil {
			t.Fatal(err)
		}
		if err := second.Ack(ctx); !errors.Is(err, ErrNotHeld) {
			t.Errorf("second Ack = %v, want %v", err, ErrNotHeld)
		}
		if left := children(t, ss[0], path); len(left) != 0 {
			t.Errorf("nodes left: %q", left)
		}
	})
}
