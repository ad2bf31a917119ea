package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/zkherd/zkherd/faultproxy"
	"github.com/zkherd/zkherd/recipes"
)

// Paused clients (the pause-client fault): a client stopped as a process
// would be under SIGSTOP or a long GC pause, its grant lost if the pause
// outlasts its session. The library must then tell it the truth: its
// release returns ErrLost. Every grant held across a pause is looked at
// after the release: lost when its session ended (or the release said
// ErrLost), reported when the release returned ErrLost.

// pausesClients reports whether the run's faults pause clients: only then
// do clients get a Pauser (connections through it cost a little).
func (r *runner) pausesClients() bool {
	for _, f := range r.run.Faults {
		if spec, ok := f.Kind.Spec(); ok && spec.PausesClients {
			return true
		}
	}
	return false
}

// givePausers gives every client its Pauser, before any session opens.
func (r *runner) givePausers() {
	if !r.pausesClients() {
		return
	}
	for _, c := range r.clients {
		c.pause = &faultproxy.Pauser{}
	}
}

// parkIfPaused stops the client's loop while it is paused. A holder
// whose Lost closes meanwhile leaves the lock's view then (exit): the
// library has told it, though it cannot act on it until resumed.
func (r *runner) parkIfPaused(c *client, h *held) {
	if c.pause == nil || !c.pause.Paused() {
		return
	}
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		c.pause.Wait(r.opCtx)
	}()
	select {
	case <-resumed:
	case <-h.lost:
		if h.exit != nil {
			h.exit()
		}
		<-resumed
	}
}

// grantPaused looks at a grant that was held across a pause, once its
// release returned err: was it lost, and was its holder told?
func (r *runner) grantPaused(s *recipes.Session, node string, err error) {
	told := errors.Is(err, recipes.ErrLost)
	ended := s.Err() != nil
	if !told && !ended {
		// The session may not know yet: the pause ended moments ago.
		ctx, cancel := context.WithTimeout(context.Background(), s.Timeout()+5*time.Second)
		werr := s.WaitConnected(ctx)
		cancel()
		ended = errors.Is(werr, recipes.ErrSessionExpired)
	}
	if !told && !ended {
		return
	}
	r.chk.lostGrants.Add(1)
	if told {
		r.chk.lostReported.Add(1)
		return
	}
	r.chk.note("lost grants reported", &r.chk.lostUnreported,
		"%s: held across a pause past the session (session 0x%x expired), and its release returned %v, not ErrLost", node, s.ID(), err)
}

// PauseClient implements faults.ClientPauser: it pauses a client that
// holds a grant now, or any client when none does (queue consumers and
// barrier participants hold nothing the run tracks).
func (fx *faultRun) PauseClient() (who string, session int64, resume func(), ok bool) {
	r := fx.r
	var holding, any []*client
	for _, c := range r.clients {
		if c.pause == nil || c.pause.Paused() {
			continue
		}
		s := c.session()
		if s == nil || s.Err() != nil {
			continue
		}
		any = append(any, c)
		if c.holding.Load() {
			holding = append(holding, c)
		}
	}
	pick := holding
	if len(pick) == 0 {
		pick = any
	}
	if len(pick) == 0 {
		return "", 0, nil, false
	}
	c := pick[rand.IntN(len(pick))]
	s := c.session()
	id := s.ID()
	fx.mu.Lock()
	fx.paused[id] = true // before the pause: expire-holder must not pick it
	fx.mu.Unlock()
	c.pauses.Add(1)
	c.pause.Pause()
	what := "holding nothing"
	if c.holding.Load() {
		what = "holding a grant"
	}
	who = fmt.Sprintf("client %d (session 0x%x, %s; session timeout %v, asked %v)", c.idx, id, what, s.Timeout(), s.AskedTimeout())
	resume = func() {
		c.pause.Resume()
		fx.mu.Lock()
		delete(fx.paused, id)
		fx.mu.Unlock()
	}
	return who, id, resume, true
}
