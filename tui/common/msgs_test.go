package common

import (
	tea "charm.land/bubbletea/v2"

	"context"
	"testing"
	"time"
)

// TestLatestNeverBlocksProducer: the producer sends everything while
// nobody reads; the reader then gets the newest value, at most one older
// one before it, and the channel closes.
func TestLatestNeverBlocksProducer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := make(chan int)
	out := Latest(ctx, in, time.Hour)
	for i := 0; i < 100; i++ {
		select {
		case in <- i:
		case <-ctx.Done():
			t.Fatalf("producer blocked at value %d", i)
		}
	}
	close(in)
	var got []int
	for v := range out {
		got = append(got, v)
	}
	if ctx.Err() != nil {
		t.Fatal("timed out")
	}
	if len(got) == 0 || got[len(got)-1] != 99 || len(got) > 2 {
		t.Errorf("got %v, want at most one early value then 99", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Errorf("values out of order: %v", got)
		}
	}
}

func TestLatestPacesDeliveries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := make(chan int)
	const every = 20 * time.Millisecond
	out := Latest(ctx, in, every)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(in)
		deadline := time.Now().Add(10 * every)
		for i := 0; time.Now().Before(deadline); i++ {
			select {
			case in <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	n := 0
	for range out {
		n++
	}
	<-done
	// 10 intervals: at most one delivery per tick plus the first and the
	// final flush.
	if n > 12 {
		t.Errorf("%d deliveries in 10 intervals, want at most 12", n)
	}
}

func TestLatestStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	in := make(chan int)
	out := Latest(ctx, in, time.Hour)
	cancel()
	for range out {
	}
}

func TestListen(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	cmd := Listen(context.Background(), "numbers", ch, func(v int) tea.Msg { return v })
	if got := cmd(); got != 7 {
		t.Errorf("got %v, want 7", got)
	}
	close(ch)
	if got, ok := cmd().(ChannelClosedMsg); !ok || got.Name != "numbers" {
		t.Errorf("after close got %#v, want ChannelClosedMsg{numbers}", got)
	}
}
