package recipes

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestHerdLocksExclude is the first half of item 9.
func TestHerdLocksExclude(t *testing.T) {
	const contenders, rounds = 10, 10
	servers := sharedServers(t)
	ctx := testCtx(t, 60*time.Second)
	for _, tc := range []struct {
		name string
		make func(s *Session, path string) Locker
	}{
		{"herd", func(s *Session, path string) Locker { return NewHerdLock(s, path) }},
		{"herd children", func(s *Session, path string) Locker { return NewHerdChildrenLock(s, path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testPath(t)
			sessions := newSessions(t, contenders, servers)
			var log grantLog
			errs := make(chan result, contenders)
			for i, s := range sessions {
				go func() {
					l := tc.make(s, path)
					for range rounds {
						if err := l.Lock(ctx); err != nil {
							errs <- result{i, err}
							return
						}
						log.enter(l.Node(), l.FencingToken())
						if err := l.Unlock(ctx); err != nil {
							errs <- result{i, err}
							return
						}
					}
					errs <- result{i, nil}
				}()
			}
			for range contenders {
				if r := <-errs; r.err != nil {
					t.Errorf("contender %d: %v", r.who, r.err)
				}
			}
			if n := log.overlaps.Load(); n != 0 {
				t.Errorf("%d overlapping critical sections, want 0", n)
			}
			if got := len(log.tokens); got != contenders*rounds {
				t.Errorf("%d grants, want %d", got, contenders*rounds)
			}
			for i := 1; i < len(log.tokens); i++ {
				if log.tokens[i] <= log.tokens[i-1] {
					t.Errorf("grant %d: token %d after %d", i, log.tokens[i], log.tokens[i-1])
					break
				}
			}
			if left := children(t, sessions[0], path); len(left) != 0 {
				t.Errorf("nodes left: %q", left)
			}
		})
	}
}

// TestWakeupsPerRelease is the second half of item 9: watch notifications
// per release, counted by the sessions (Session.WatchEvents), stay at one
// for the fair lock and grow with the number of waiters for both herd
// locks. A holder's own notifications about its own release (its node's
// watch, and for the children lock its directory watch) are not wake-ups:
// they are counted while it releases and taken out.
func TestWakeupsPerRelease(t *testing.T) {
	servers := sharedServers(t)
	ctx := testCtx(t, 90*time.Second)
	kinds := []struct {
		name string
		make func(s *Session, path string, opts ...LockOption) Locker
	}{
		{"fair", func(s *Session, path string, opts ...LockOption) Locker { return NewLock(s, path, opts...) }},
		{"herd", func(s *Session, path string, opts ...LockOption) Locker { return NewHerdLock(s, path, opts...) }},
		{"herd children", func(s *Session, path string, opts ...LockOption) Locker {
			return NewHerdChildrenLock(s, path, opts...)
		}},
	}
	perRelease := map[string]map[int]float64{}
	for _, kind := range kinds {
		perRelease[kind.name] = map[int]float64{}
		for _, waiters := range []int{4, 16} {
			got := measureWakeups(t, ctx, servers, kind.make, waiters)
			perRelease[kind.name][waiters] = got
			t.Logf("%-13s %2d waiters: %.2f wake-ups per release", kind.name, waiters, got)
		}
	}
	if t.Failed() {
		return
	}
	for _, w := range []int{4, 16} {
		if got := perRelease["fair"][w]; got < 0.9 || got > 1.1 {
			t.Errorf("fair lock, %d waiters: %.2f wake-ups per release, want about 1", w, got)
		}
	}
	for _, name := range []string{"herd", "herd children"} {
		small, large := perRelease[name][4], perRelease[name][16]
		// One release wakes every waiter still queued: (w+1)/2 per release
		// on average for w waiters, 2.5 and 8.5 here, somewhat less when a
		// waiter that lost a race has not re-armed its watch in time.
		if large < 2*small || large < 4 {
			t.Errorf("%s lock: %.2f wake-ups per release with 4 waiters, %.2f with 16: want growth with the waiters", name, small, large)
		}
	}
}

// measureWakeups has one holder release the lock to a queue of waiters,
// one at a time: each waiter, once granted, releases right away, and the
// count of releases is the number of waiters.
func measureWakeups(t *testing.T, ctx context.Context, servers []string, mk func(*Session, string, ...LockOption) Locker, waiters int) float64 {
	t.Helper()
	path := fmt.Sprintf("%s/%d", testPath(t), waiters)
	type member struct {
		s         *Session
		l         Locker
		releasing atomic.Bool
		own       atomic.Int64 // notifications received while releasing
		waiting   atomic.Int32 // 1 while blocked on a watch
	}
	ms := make([]*member, waiters+1)
	for i := range ms {
		m := &member{}
		m.s = newTestSession(t, servers, WithEventObserver(func(ev zk.Event) {
			if ev.Type != zk.EventSession && ev.Type != zk.EventNotWatching && m.releasing.Load() {
				m.own.Add(1)
			}
		}))
		m.l = mk(m.s, path, WithTrace(&LockTrace{
			Waiting: func(time.Time) { m.waiting.Store(1) },
			Woken:   func(time.Time) { m.waiting.Store(0) },
		}))
		ms[i] = m
	}
	release := func(m *member) error {
		m.releasing.Store(true)
		defer m.releasing.Store(false)
		return m.l.Unlock(ctx)
	}
	holder := ms[0]
	if err := holder.l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// All waiters queue up before the first release, so every release
	// happens with the remaining waiters waiting.
	done := make(chan result, waiters)
	for i, m := range ms[1:] {
		go func() {
			if err := m.l.Lock(ctx); err != nil {
				done <- result{i, err}
				return
			}
			done <- result{i, release(m)}
		}()
	}
	waitFor(t, 20*time.Second, "all waiters to wait", func() bool {
		n := 0
		for _, m := range ms[1:] {
			n += int(m.waiting.Load())
		}
		return n == waiters
	})
	base := make([]int64, len(ms))
	for i, m := range ms {
		base[i] = m.s.WatchEvents()
	}
	if err := release(holder); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		if r := <-done; r.err != nil {
			t.Errorf("waiter %d: %v", r.who, r.err)
		}
	}
	var events, own int64
	for i, m := range ms {
		events += m.s.WatchEvents() - base[i]
		own += m.own.Load()
	}
	// waiters+1 releases, of which the last wakes nobody.
	return float64(events-own) / float64(waiters)
}
