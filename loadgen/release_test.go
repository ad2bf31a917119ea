package loadgen

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
	"github.com/zkherd/zkherd/recipes"
)

// TestReleaseEndsALostGrantItCouldNotDelete: a holder cut off from the
// servers past its session gets ErrLost from an Unlock that could not
// delete its node and keeps the grant for a later Unlock. release must
// not return with the grant still held on a live session: every later
// Lock on the value then failed at once with ErrLost (fair-lock-chaos
// spun on a million failed acquisitions in 150 s).
func TestReleaseEndsALostGrantItCouldNotDelete(t *testing.T) {
	ens := enstest.StartConfig(t, 1, shortSessions)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := faultproxy.New(ctx, ens.Servers()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s, err := recipes.NewSession(ctx, []string{p.Addr()}, recipes.WithSessionTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := recipes.NewLock(s, "/zkherd-test/release-lost")
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	p.SetDropping(true) // the servers out of reach from now on
	defer p.SetDropping(false)
	select {
	case <-l.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("Lost still open 20 s after the servers went out of reach")
	}
	r := &runner{}
	r.run.SessionTimeout = 2 * time.Second
	err = r.release(s, l.Unlock, func() bool { return l.Node() != "" })
	if !errors.Is(err, recipes.ErrLost) {
		t.Errorf("release = %v, want an error wrapping ErrLost", err)
	}
	if l.Node() != "" && s.Err() == nil {
		lctx, lcancel := context.WithTimeout(ctx, time.Second)
		defer lcancel()
		t.Errorf("release returned (%v) with the grant still held on a live session; the next Lock: %v", err, l.Lock(lctx))
	}
}
