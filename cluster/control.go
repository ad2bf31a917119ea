package cluster

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/zkherd/zkherd/ensemble"
)

// Member commands a running `cluster up` accepts.
const (
	OpKill    = "kill"    // SIGKILL, as a crash or power loss
	OpPause   = "pause"   // SIGSTOP: sockets open, no answers (a long GC pause)
	OpResume  = "resume"  // SIGCONT after a pause
	OpRestart = "restart" // stop gracefully if running, then start on the same ports and data
)

// ValidOp reports whether op is a member command.
func ValidOp(op string) bool {
	return op == OpKill || op == OpPause || op == OpResume || op == OpRestart
}

// Controller runs member commands on a local ensemble and reports what
// happens to its members: the commands it ran, and the deaths and leader
// changes nobody asked for (Watch). Safe for concurrent use.
type Controller struct {
	ens    *ensemble.Ensemble
	token  string
	report func(string)

	mu     sync.Mutex // serializes commands with the watch's view of them
	last   map[int]ensemble.State
	leader int // -1 before the first look
}

// NewController controls ens, accepting requests that carry token, and
// passes every notice (one line each) to report, from any goroutine.
func NewController(ens *ensemble.Ensemble, token string, report func(string)) *Controller {
	c := &Controller{ens: ens, token: token, report: report, last: map[int]ensemble.State{}, leader: -1}
	for _, m := range ens.Members() {
		c.last[m.ID] = m.State
	}
	return c
}

// Reply is the outcome of one member command.
type Reply struct {
	Member  int    `json:"member"`
	Op      string `json:"op"`
	State   string `json:"state,omitempty"` // the member's state afterwards
	PID     int    `json:"pid,omitempty"`   // its process, when it runs
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

type request struct {
	Token  string `json:"token"`
	Op     string `json:"op"`
	Member int    `json:"member"`
}

// Do runs op on member id.
func (c *Controller) Do(ctx context.Context, op string, id int) Reply {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Reply{Member: id, Op: op}
	var err error
	switch op {
	case OpKill:
		err = c.ens.Kill(id)
	case OpPause:
		err = c.ens.Pause(id)
	case OpResume:
		err = c.ens.Resume(id)
	case OpRestart:
		if st, ok := c.last[id]; ok && st != ensemble.Stopped {
			err = c.ens.StopMember(id)
		}
		if err == nil {
			err = c.ens.Restart(ctx, id)
		}
	default:
		err = fmt.Errorf("cluster: unknown member command %q (want kill, pause, resume or restart)", op)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	for _, m := range c.ens.Members() {
		if m.ID == id {
			r.State, r.PID = m.State.String(), m.PID
			c.last[id] = m.State
		}
	}
	verb := map[string]string{OpKill: "killed", OpPause: "paused", OpResume: "resumed", OpRestart: "restarted"}[op]
	r.Message = fmt.Sprintf("member %d %s (now %s", id, verb, r.State)
	if r.PID > 0 {
		r.Message += fmt.Sprintf(", pid %d", r.PID)
	}
	r.Message += ")"
	c.report(r.Message + " on request")
	return r
}

// Serve answers member commands on l until ctx ends, then closes l and
// waits for the commands under way.
func (c *Controller) Serve(ctx context.Context, l net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	for {
		conn, err := l.Accept()
		if err != nil {
			return // closed: ctx ended
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			c.handle(ctx, conn)
		}()
	}
}

func (c *Controller) handle(ctx context.Context, conn net.Conn) {
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var req request
	if err := json.NewDecoder(conn).Decode(&req); err != nil {
		return
	}
	var r Reply
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(c.token)) != 1 {
		r = Reply{Member: req.Member, Op: req.Op, Error: "cluster: bad token"}
	} else {
		r = c.Do(ctx, req.Op, req.Member)
	}
	conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	json.NewEncoder(conn).Encode(r)
}

// Send asks the `cluster up` of rec to run op on member id and waits for
// its reply (a restart waits until the member serves again).
func Send(ctx context.Context, rec Record, op string, id int) (Reply, error) {
	if !ValidOp(op) {
		return Reply{}, fmt.Errorf("cluster: unknown member command %q (want kill, pause, resume or restart)", op)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", rec.Control)
	if err != nil {
		return Reply{}, fmt.Errorf("cluster: the \"zkherd cluster up\" of pid %d does not answer at %s: %w", rec.PID, rec.Control, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := json.NewEncoder(conn).Encode(request{Token: rec.Token, Op: op, Member: id}); err != nil {
		return Reply{}, fmt.Errorf("cluster: %w", err)
	}
	var r Reply
	if err := json.NewDecoder(conn).Decode(&r); err != nil {
		if ctx.Err() != nil {
			return Reply{}, fmt.Errorf("cluster: no reply to %s of member %d: %w", op, id, ctx.Err())
		}
		return Reply{}, fmt.Errorf("cluster: no reply to %s of member %d: %w", op, id, err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}

// Watch looks at the members every period until ctx ends and reports
// every change no command asked for: a member whose process died, and
// (for several members) a new leader or none.
func (c *Controller) Watch(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.look(ctx)
	}
}

func (c *Controller) look(ctx context.Context) {
	c.mu.Lock() // read under the lock, so a command's change is never seen half-done
	members := c.ens.Members()
	for _, m := range members {
		was := c.last[m.ID]
		if m.State == was {
			continue
		}
		c.last[m.ID] = m.State
		if m.State == ensemble.Stopped {
			c.report(fmt.Sprintf("member %d (%s) died: its process exited; see %s", m.ID, m.ClientAddr, m.LogFile))
		} else {
			c.report(fmt.Sprintf("member %d (%s) is now %s", m.ID, m.ClientAddr, m.State))
		}
	}
	c.mu.Unlock()
	if len(members) < 2 {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	leader, err := c.ens.Leader(lctx)
	cancel()
	if ctx.Err() != nil || errors.Is(err, ensemble.ErrStopped) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if leader == c.leader {
		return
	}
	first := c.leader == -1
	c.leader = leader
	switch {
	case leader == 0:
		c.report("no leader: the members are electing one, or a quorum is down")
	case !first:
		c.report(fmt.Sprintf("leader is now member %d", leader))
	}
}
