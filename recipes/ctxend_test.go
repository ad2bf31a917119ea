package recipes

// Tests for a ctx that ends while a request's outcome is unknown (issue
// 21): the request reached the server and was carried out, its reply was
// lost with the connection, and the session's reconnection is held back
// until the caller's ctx has ended. Whatever the call returns, no node,
// item or claim may be left that the caller does not know of.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/faultproxy"
)

// lostReply is a fault set up through a proxy: the next request with
// opcode op on any connection is carried out and its reply lost (or, with
// before, never sent), and the session's reconnection is held back.
type lostReply struct {
	cut     <-chan struct{}
	arrived <-chan struct{}
	release func()
}

func loseReply(t *testing.T, p *faultproxy.Proxy, s *Session, op int32, before bool) *lostReply {
	t.Helper()
	arrived, release := p.HoldReconnects(s.ID())
	t.Cleanup(release)
	var cut <-chan struct{}
	if before {
		cut = p.CutBefore(op, 1)
	} else {
		cut = p.CutAfter(op, 1)
	}
	return &lostReply{cut: cut, arrived: arrived, release: release}
}

// happened waits until the request was cut and the session tries to
// reconnect (held back).
func (f *lostReply) happened(t *testing.T) {
	t.Helper()
	for _, ch := range []<-chan struct{}{f.cut, f.arrived} {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatal("the fault did not happen: the request was not sent, or the session did not reconnect")
		}
	}
}

// TestBarrierCreateOutcomeUnknown is issue 21 bug 4 (barrier): a
// participant's create is carried out but its reply lost, and its ctx
// ends before it can reconnect. Wait returned ctx's error and left the
// node, which a second participant then counted: a barrier for 2 let a
// single real participant through and left BarrierReady for the next
// round.
func TestBarrierCreateOutcomeUnknown(t *testing.T) {
	servers := sharedServers(t)
	path := freshPath(t)
	ctx := testCtx(t, 30*time.Second)
	p := newProxy(t, servers[0])
	s1 := newTestSession(t, []string{p.Addr()}, orderedDialer())
	s2 := newTestSession(t, servers)
	if err := ensurePath(ctx, s2, path); err != nil {
		t.Fatal(err)
	}
	f := loseReply(t, p, s1, faultproxy.OpCreate, false)
	waitCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- NewBarrier(s1, path, 2).Wait(waitCtx) }()
	f.happened(t)
	cancel()
	f.release()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait whose ctx ended with its create's outcome unknown = %v, want %v", err, context.Canceled)
	}
	if left := children(t, s2, path); len(left) != 0 {
		t.Errorf("nodes left by the abandoned participant: %q", left)
	}
	aloneCtx, aloneCancel := context.WithTimeout(ctx, time.Second)
	defer aloneCancel()
	if err := NewBarrier(s2, path, 2).Wait(aloneCtx); err == nil {
		t.Errorf("a barrier for 2 let a single participant through")
	}
	if left := children(t, s2, path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// TestClaimCreateOutcomeUnknown is issue 21 bug 4 (queue): Claim's create
// of the claim node is carried out, its reply lost, and ctx ends: the
// item stayed claimed by a live session that no longer wanted it, and no
// other consumer could claim it.
func TestClaimCreateOutcomeUnknown(t *testing.T) {
	servers := sharedServers(t)
	path := freshPath(t)
	ctx := testCtx(t, 30*time.Second)
	p := newProxy(t, servers[0])
	s1 := newTestSession(t, []string{p.Addr()}, orderedDialer())
	s2 := newTestSession(t, servers)
	if _, err := NewQueue(s2, path).Put(ctx, []byte("item")); err != nil {
		t.Fatal(err)
	}
	f := loseReply(t, p, s1, faultproxy.OpCreate, false)
	claimCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		c, err := NewQueue(s1, path).Claim(claimCtx)
		if err == nil {
			err = errors.New("claimed " + c.Item())
		}
		done <- err
	}()
	f.happened(t)
	cancel()
	f.release()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Claim whose ctx ended with its create's outcome unknown = %v, want %v", err, context.Canceled)
	}
	otherCtx, otherCancel := context.WithTimeout(ctx, 5*time.Second)
	defer otherCancel()
	c, err := NewQueue(s2, path).Claim(otherCtx)
	if err != nil {
		t.Fatalf("another consumer's Claim = %v: the item is still claimed by the abandoned claim", err)
	}
	if err := c.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if left := children(t, s2, path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}

// TestTakeDeleteOutcomeUnknown is issue 21 bug 5: Take's delete of the
// item is carried out, its reply lost, and ctx ends before the session is
// back. Take returned ctx's error for an item it had removed: nobody ever
// got it. Now it finds out (within the session timeout) and returns the
// item; and when the delete never reached the server, the item stays.
func TestTakeDeleteOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before bool // the delete never reaches the server
	}{
		{"applied", false},
		{"not-sent", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers := sharedServers(t)
			path := freshPath(t)
			ctx := testCtx(t, 30*time.Second)
			p := newProxy(t, servers[0])
			s1 := newTestSession(t, []string{p.Addr()}, orderedDialer())
			s2 := newTestSession(t, servers)
			if _, err := NewQueue(s2, path).Put(ctx, []byte("item")); err != nil {
				t.Fatal(err)
			}
			f := loseReply(t, p, s1, faultproxy.OpDelete, tc.before)
			takeCtx, cancel := context.WithCancel(ctx)
			type taken struct {
				data []byte
				err  error
			}
			done := make(chan taken, 1)
			go func() {
				data, err := NewQueue(s1, path).Take(takeCtx)
				done <- taken{data, err}
			}()
			f.happened(t)
			cancel()
			f.release()
			got := <-done
			n, err := NewQueue(s2, path).Len(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case got.err == nil && string(got.data) == "item" && n == 0:
				if tc.before {
					t.Errorf("Take = item, but its delete never reached the server")
				}
			case errors.Is(got.err, context.Canceled) && n == 1:
				if !tc.before {
					t.Errorf("Take = %v with the item still queued, but its delete was carried out", got.err)
				}
			default:
				t.Errorf("Take = %q, %v with %d items left: the item was lost or duplicated", got.data, got.err, n)
			}
		})
	}
}

// TestPutOutcomeUnknownSaysSo: Put's create of a (persistent) item is
// carried out, its reply lost, ctx ends, and the session expires before it
// can reconnect, so the item it meant to withdraw stays. Put returned
// ctx's error, as if nothing had been queued: a caller that puts again
// queues the item twice. It must say that the outcome is unknown.
func TestPutOutcomeUnknownSaysSo(t *testing.T) {
	servers := sharedServers(t)
	path := freshPath(t)
	ctx := testCtx(t, 60*time.Second)
	p := newProxy(t, servers[0])
	s1 := newTestSession(t, []string{p.Addr()}, orderedDialer(), WithSessionTimeout(2*time.Second))
	s2 := newTestSession(t, servers)
	if err := ensurePath(ctx, s2, path); err != nil {
		t.Fatal(err)
	}
	// An ephemeral node of s1's tells when the server has expired it.
	marker := path + "-alive"
	if _, err := s1.Conn().Create(marker, nil, zk.FlagEphemeral, openACL); err != nil {
		t.Fatal(err)
	}
	f := loseReply(t, p, s1, faultproxy.OpCreate, false)
	putCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := NewQueue(s1, path).Put(putCtx, []byte("item"))
		done <- err
	}()
	f.happened(t)
	cancel()
	waitFor(t, 30*time.Second, "the server to expire the session", func() bool {
		ok, _, err := s2.Conn().Exists(marker)
		return err == nil && !ok
	})
	f.release()
	err := <-done
	n, lerr := NewQueue(s2, path).Len(ctx)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if n == 1 && !errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("Put = %v with its item queued, want an error wrapping %v", err, ErrOutcomeUnknown)
	}
	if n == 0 && err == nil {
		t.Errorf("Put = nil with no item queued")
	}
}

// TestPutConsumedBeforeItsReplyIsNotPutTwice: a Put's create is carried
// out, its reply lost, and a consumer takes the item before the producer
// reconnects. The producer finds no item under its protected name: that
// does not prove the create undone, and creating again queued the item a
// second time (queue-adversary delivered two items twice). Put must not
// create a copy; it says the outcome is unknown.
func TestPutConsumedBeforeItsReplyIsNotPutTwice(t *testing.T) {
	servers := sharedServers(t)
	path := freshPath(t)
	ctx := testCtx(t, 60*time.Second)
	p := newProxy(t, servers[0])
	producer := newTestSession(t, []string{p.Addr()}, orderedDialer())
	consumer := newTestSession(t, servers)
	if err := ensurePath(ctx, consumer, path); err != nil {
		t.Fatal(err)
	}
	f := loseReply(t, p, producer, faultproxy.OpCreate, false)
	done := make(chan error, 1)
	go func() {
		_, err := NewQueue(producer, path).Put(ctx, []byte("item"))
		done <- err
	}()
	f.happened(t)
	takeCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	data, err := NewQueue(consumer, path).Take(takeCtx)
	if err != nil || string(data) != "item" {
		t.Fatalf("Take = %q, %v; want the item the lost reply's create queued", data, err)
	}
	f.release()
	err = <-done
	n, lerr := NewQueue(consumer, path).Len(ctx)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if n != 0 {
		t.Errorf("Put = %v and %d item(s) queued after its only item was taken: queued twice", err, n)
	}
	if !errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("Put = %v, want an error wrapping %v (its item was created and taken)", err, ErrOutcomeUnknown)
	}
}
