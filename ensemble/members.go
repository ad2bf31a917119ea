package ensemble

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Mode asks member id for its srvr Mode: "leader", "follower" or
// "standalone". It fails while the member is not serving, for example while
// it is paused or electing a leader.
func (e *Ensemble) Mode(ctx context.Context, id int) (string, error) {
	e.mu.Lock()
	m, err := e.member(id)
	e.mu.Unlock()
	if err != nil {
		return "", err
	}
	return mode(ctx, m.ports.clientAddr(), e.tlsClient)
}

// Leader returns the ID of the member that reports Mode leader (or
// standalone) right now, asking only running members, since a paused one
// cannot answer. It does not wait for an election: see WaitLeader.
func (e *Ensemble) Leader(ctx context.Context) (int, error) {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return 0, ErrStopped
	}
	var running []*member
	for _, m := range e.members {
		if m.state() == Running {
			running = append(running, m)
		}
	}
	e.mu.Unlock()

	var leaders []int
	for _, m := range running {
		md, err := mode(ctx, m.ports.clientAddr(), e.tlsClient)
		if err == nil && (md == "leader" || md == "standalone") {
			leaders = append(leaders, m.id)
		}
	}
	switch len(leaders) {
	case 0:
		return 0, ErrNoLeader
	case 1:
		return leaders[0], nil
	}
	return 0, fmt.Errorf("ensemble: members %v all claim to lead", leaders)
}

// WaitLeader polls Leader until exactly one running member leads, or ctx
// ends (AwaitLeader).
func (e *Ensemble) WaitLeader(ctx context.Context) (int, error) { return AwaitLeader(ctx, e, 0) }

// AwaitLeader polls l's Leader every 50ms, each poll bounded by
// srvrTimeout, until a member other than not leads (not 0: any member), or
// ctx ends. It is the one leader wait: the faults package measures an
// election with it. A stopped ensemble ends it with ErrStopped.
func AwaitLeader(ctx context.Context, l interface {
	Leader(context.Context) (int, error)
}, not int) (int, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, srvrTimeout)
		id, err := l.Leader(qctx)
		cancel()
		switch {
		case err == nil && id != not:
			return id, nil
		case errors.Is(err, ErrStopped):
			return 0, err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("member %d still leads", id)
			}
			return 0, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		}
	}
}

// member returns member id. The caller holds e.mu.
func (e *Ensemble) member(id int) (*member, error) {
	if e.stopped {
		return nil, ErrStopped
	}
	if id < 1 || id > len(e.members) {
		return nil, fmt.Errorf("%w: %d (have 1..%d)", ErrUnknownMember, id, len(e.members))
	}
	return e.members[id-1], nil
}

// withMember runs f on member id if its state is one of want.
func (e *Ensemble) withMember(id int, op string, f func(m *member) error, want ...State) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, err := e.member(id)
	if err != nil {
		return err
	}
	st := m.state()
	for _, w := range want {
		if st == w {
			return f(m)
		}
	}
	return fmt.Errorf("%w: cannot %s member %d: it is %v", ErrMemberState, op, id, st)
}

// Kill sends SIGKILL to member id, as a crash or power loss would, and waits
// until the process is gone. Clients see their connections reset at once.
func (e *Ensemble) Kill(id int) error {
	return e.withMember(id, "kill", func(m *member) error {
		if err := m.proc.kill(); err != nil {
			return err
		}
		m.proc, m.paused = nil, false
		e.logf("ensemble: killed member %d", id)
		return nil
	}, Running, Paused)
}

// StopMember stops member id gracefully with SIGTERM (resuming it first if
// paused), and kills it if it has not exited within 15 s.
func (e *Ensemble) StopMember(id int) error {
	return e.withMember(id, "stop", func(m *member) error {
		p := m.proc
		if err := p.signal(syscall.SIGTERM); err != nil {
			return err
		}
		if err := p.signal(syscall.SIGCONT); err != nil {
			return err
		}
		if p.wait(exitWait) != nil {
			e.logf("ensemble: member %d ignored SIGTERM; killing it", id)
			if err := p.kill(); err != nil {
				return err
			}
		}
		m.proc, m.paused = nil, false
		e.logf("ensemble: stopped member %d", id)
		return nil
	}, Running, Paused)
}

// Pause freezes member id with SIGSTOP: its sockets stay open but it answers
// nothing, like a long GC pause or a hung machine. Peers and clients notice
// only through their timeouts.
func (e *Ensemble) Pause(id int) error {
	return e.withMember(id, "pause", func(m *member) error {
		if err := m.proc.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		m.paused = true
		if !waitStopped(m.proc.pid, 2*time.Second) {
			e.logf("ensemble: member %d not seen stopped 2s after SIGSTOP", id)
		}
		e.logf("ensemble: paused member %d", id)
		return nil
	}, Running)
}

// Resume continues a paused member with SIGCONT.
func (e *Ensemble) Resume(id int) error {
	return e.withMember(id, "resume", func(m *member) error {
		if err := m.proc.signal(syscall.SIGCONT); err != nil {
			return err
		}
		m.paused = false
		e.logf("ensemble: resumed member %d", id)
		return nil
	}, Paused)
}

// Restart starts a killed or stopped member again on the same ports and data
// directory, and waits until it serves (which, in a 3-node ensemble, needs a
// quorum to be up).
func (e *Ensemble) Restart(ctx context.Context, id int) error {
	var m *member
	err := e.withMember(id, "restart", func(mm *member) error {
		m = mm
		return e.spawn(m)
	}, Stopped)
	if err != nil {
		return err
	}
	e.mu.Lock()
	p := m.proc
	e.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	md, err := e.waitServing(ctx, m, p)
	if err != nil {
		e.mu.Lock()
		if m.proc == p {
			p.kill()
			m.proc = nil
		}
		e.mu.Unlock()
		return err
	}
	e.logf("ensemble: restarted member %d (pid %d, %s)", id, p.pid, md)
	return nil
}
