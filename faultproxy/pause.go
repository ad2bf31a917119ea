package faultproxy

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Pauser stands in for a paused client process (a GC pause, SIGSTOP, a VM
// frozen) on the client's side of its connections, inside one process: a
// client dials through Dial, and while paused nothing it writes leaves and
// nothing that arrives is read, so neither the server nor the client
// library hears from the other, and the library's own timers (driven by
// reads that never return) stand still as a stopped process's would. The
// client's own goroutines park in Wait. On Resume, everything held goes
// on, as after SIGCONT: reads that timed out or ended meanwhile report it,
// writes meet whatever the server did to the connection meanwhile.
//
// A Pauser can also hold back only the reads (PauseReads): the client
// writes on, into a connection the server may have closed, which is how a
// client meets "write: broken pipe" from the operating system.
type Pauser struct {
	mu         sync.Mutex
	gate       chan struct{} // closed by Resume; nil while running
	holdWrites bool          // writes are held too
	// writes counts writes begun; writeErrs those that failed while
	// reads were held.
	writes, writeErrs atomic.Int64
}

// Pause holds the reads and writes of every connection dialled through p,
// and new dials, until Resume. It reports false when already paused.
func (p *Pauser) Pause() bool { return p.pause(true) }

// PauseReads holds only the reads, until Resume.
func (p *Pauser) PauseReads() bool { return p.pause(false) }

func (p *Pauser) pause(writes bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		return false
	}
	p.gate, p.holdWrites = make(chan struct{}), writes
	return true
}

// Resume lets everything held go on. Idempotent.
func (p *Pauser) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

// Paused reports whether p holds anything now.
func (p *Pauser) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gate != nil
}

// WriteErrors counts the writes that failed while only reads were held.
func (p *Pauser) WriteErrors() int64 { return p.writeErrs.Load() }

// Writes counts the writes made through p's connections.
func (p *Pauser) Writes() int64 { return p.writes.Load() }

// held returns the gate to wait at, nil when running (for a write, nil
// also while only reads are held).
func (p *Pauser) held(write bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate == nil || (write && !p.holdWrites) {
		return nil
	}
	return p.gate
}

// Wait parks the calling goroutine while p is paused (not while only
// reads are held), or until ctx ends.
func (p *Pauser) Wait(ctx context.Context) error {
	if g := p.held(true); g != nil {
		select {
		case <-g:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Dial wraps a go-zookeeper dialer (zk.Dialer's signature) so that its
// connections obey p.
func (p *Pauser) Dial(dial func(network, address string, timeout time.Duration) (net.Conn, error)) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		if g := p.held(true); g != nil {
			<-g
		}
		c, err := dial(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &pausedConn{Conn: c, p: p}, nil
	}
}

type pausedConn struct {
	net.Conn
	p *Pauser
}

// Read reads first and waits after: bytes that arrive during a pause are
// taken off the socket but handed over only on Resume, and a read blocked
// when the pause began still returns only then.
func (c *pausedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if g := c.p.held(false); g != nil {
		<-g
	}
	return n, err
}

func (c *pausedConn) Write(b []byte) (int, error) {
	if g := c.p.held(true); g != nil {
		<-g
	}
	n, err := c.Conn.Write(b)
	c.p.writes.Add(1)
	if err != nil && c.p.held(false) != nil {
		c.p.writeErrs.Add(1)
	}
	return n, err
}
