package faultproxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// ErrNoSession is returned by ExpireSession for a session the proxy has not
// seen or the server no longer knows.
var ErrNoSession = errors.New("faultproxy: unknown session")

// Session is a ZooKeeper session seen through the proxy: its id and
// password come from the server's ConnectResponse, which is all another
// connection needs to take the session over.
type Session struct {
	ID      int64
	Passwd  []byte
	Timeout time.Duration // negotiated
	// Conn is the proxy connection that carries it now, 0 when none does.
	Conn int
}

// Link is one open connection through the proxy.
type Link struct {
	Conn    int   // connection number, from 1
	Session int64 // 0 until the handshake is done
	// Dropping is set while the connection is a black hole (DropConn).
	Dropping bool
}

// Links returns the open connections, in accept order.
func (p *Proxy) Links() []Link {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Link, 0, len(p.links))
	for l := range p.links {
		out = append(out, Link{Conn: l.id, Session: l.session.Load(), Dropping: l.dropThis.Load()})
	}
	slices.SortFunc(out, func(a, b Link) int { return a.Conn - b.Conn })
	return out
}

// Sessions returns the sessions whose connections are open through the
// proxy now, by id.
func (p *Proxy) Sessions() []Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Session
	for l := range p.links {
		id := l.session.Load()
		if id == 0 {
			continue
		}
		if s, ok := p.sessions[id]; ok {
			s.Conn = l.id
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Session) int { return a.Conn - b.Conn })
	return out
}

// LookupSession returns what the proxy learnt about session id, also after
// its connection closed; ok is false for a session never seen.
func (p *Proxy) LookupSession(id int64) (s Session, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok = p.sessions[id]
	if ok {
		s.Passwd = slices.Clone(s.Passwd)
		for l := range p.links {
			if l.session.Load() == id {
				s.Conn = l.id
			}
		}
	}
	return s, ok
}

// Forget drops what the proxy remembers of session id (after it ended).
func (p *Proxy) Forget(id int64) {
	p.mu.Lock()
	delete(p.sessions, id)
	p.mu.Unlock()
}

// CutConn drops connection conn, both sides, as CutAll does for all; it
// reports whether the connection was open.
func (p *Proxy) CutConn(conn int) bool {
	l := p.linkByID(conn)
	if l == nil {
		return false
	}
	l.closeBoth()
	return true
}

// CutSession drops every connection carrying session id and returns how
// many it dropped.
func (p *Proxy) CutSession(id int64) int {
	p.mu.Lock()
	var links []*link
	for l := range p.links {
		if l.session.Load() == id {
			links = append(links, l)
		}
	}
	p.mu.Unlock()
	for _, l := range links {
		l.closeBoth()
	}
	return len(links)
}

// DropConn turns connection conn into a black hole (on) as SetDropping does
// for all, or back (off): then it is cut if it lost packets, since its
// stream is no longer consistent. It reports whether the connection was
// open.
func (p *Proxy) DropConn(conn int, on bool) bool {
	l := p.linkByID(conn)
	if l == nil {
		return false
	}
	l.dropThis.Store(on)
	if !on && l.dropped.Load() {
		l.closeBoth()
	}
	return true
}

func (p *Proxy) linkByID(conn int) *link {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.links {
		if l.id == conn {
			return l
		}
	}
	return nil
}

// HoldReconnects holds back every new connection that tries to resume
// session id: its ConnectRequest is read but not passed on until release is
// called (or the proxy closes). arrived is closed when the first such
// connection comes in. A fault uses it to make a client notice that its
// connection is gone before the session ends on the server, as happens
// when a partitioned client's session expires. release is idempotent.
func (p *Proxy) HoldReconnects(id int64) (arrived <-chan struct{}, release func()) {
	gate, seen := make(chan struct{}), make(chan struct{})
	p.mu.Lock()
	if p.holds == nil {
		p.holds = make(map[int64]chan struct{})
		p.holdSeen = make(map[int64]chan struct{})
	}
	p.holds[id], p.holdSeen[id] = gate, seen
	p.mu.Unlock()
	released := false
	return seen, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if released {
			return
		}
		released = true
		if p.holds[id] == gate {
			delete(p.holds, id)
			delete(p.holdSeen, id)
		}
		close(gate)
	}
}

// ExpireSession ends session id on the server at once, as the server does
// when a session times out: it opens its own connection to the proxy's
// target with the session's id and password (which moves the session to
// that connection, so the server closes the client's), and sends
// closeSession. The server deletes the session's ephemeral nodes, fires
// their watches, and answers the client's next reconnection with "session
// expired". It returns ErrNoSession if the proxy never saw the session or
// the server no longer knows it.
func (p *Proxy) ExpireSession(ctx context.Context, id int64) error {
	s, ok := p.LookupSession(id)
	if !ok {
		return fmt.Errorf("%w: 0x%x was never seen through %s", ErrNoSession, id, p.Addr())
	}
	return CloseSession(ctx, p.target, s)
}

// CloseSession connects to server ("host:port", not through a proxy) as
// session s and closes it; see ExpireSession.
func CloseSession(ctx context.Context, server string, s Session) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", server)
	if err != nil {
		return fmt.Errorf("faultproxy: expire session 0x%x: %w", s.ID, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	c.SetDeadline(deadline)
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if _, err := c.Write(connectRequest(s.ID, s.Passwd, timeout)); err != nil {
		return fmt.Errorf("faultproxy: expire session 0x%x: %w", s.ID, ctxErr(ctx, err))
	}
	resp, err := readFrame(c)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("faultproxy: expire session 0x%x: %s closed the connection without answering (not serving?)", s.ID, server)
		}
		return fmt.Errorf("faultproxy: expire session 0x%x: %w", s.ID, ctxErr(ctx, err))
	}
	cr, ok := parseConnectResponse(resp)
	if !ok || cr.ID == 0 || cr.Timeout == 0 {
		return fmt.Errorf("%w: server %s says session 0x%x has already ended", ErrNoSession, server, s.ID)
	}
	// closeSession: a request header (xid, type) with no body.
	req := make([]byte, 12)
	binary.BigEndian.PutUint32(req[0:4], 8)
	binary.BigEndian.PutUint32(req[4:8], 1)
	op := OpClose
	binary.BigEndian.PutUint32(req[8:12], uint32(op))
	if _, err := c.Write(req); err != nil {
		return fmt.Errorf("faultproxy: expire session 0x%x: %w", s.ID, ctxErr(ctx, err))
	}
	for {
		reply, err := readFrame(c)
		if err != nil {
			// The server closes the connection after closing the session;
			// an EOF here means it did.
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("faultproxy: expire session 0x%x: no reply to closeSession: %w", s.ID, ctxErr(ctx, err))
		}
		if len(reply) >= 20 && int32(binary.BigEndian.Uint32(reply[4:8])) == 1 {
			if code := int32(binary.BigEndian.Uint32(reply[16:20])); code != 0 {
				return fmt.Errorf("faultproxy: expire session 0x%x: closeSession failed with code %d", s.ID, code)
			}
			return nil
		}
		// A watch notification (xid -1) for the session: skip it.
	}
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// connectRequest frames a ConnectRequest resuming session id.
func connectRequest(id int64, passwd []byte, timeout time.Duration) []byte {
	var b bytes.Buffer
	b.Write(make([]byte, 4))                                          // length, filled in below
	binary.Write(&b, binary.BigEndian, int32(0))                      // protocolVersion
	binary.Write(&b, binary.BigEndian, int64(0))                      // lastZxidSeen
	binary.Write(&b, binary.BigEndian, int32(timeout.Milliseconds())) // timeOut
	binary.Write(&b, binary.BigEndian, id)                            // sessionId
	binary.Write(&b, binary.BigEndian, int32(len(passwd)))            // passwd
	b.Write(passwd)
	b.WriteByte(0) // readOnly
	out := b.Bytes()
	binary.BigEndian.PutUint32(out[0:4], uint32(len(out)-4))
	return out
}

// parseConnectRequest reads the session id a ConnectRequest (with its
// length prefix) resumes; 0 for a new session.
func parseConnectRequest(buf []byte) (id int64, ok bool) {
	// length(4) protocolVersion(4) lastZxidSeen(8) timeOut(4) sessionId(8)
	if len(buf) < 28 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(buf[20:28])), true
}

// parseConnectResponse reads a ConnectResponse (with its length prefix).
func parseConnectResponse(buf []byte) (Session, bool) {
	// length(4) protocolVersion(4) timeOut(4) sessionId(8) passwd(4+n)
	if len(buf) < 24 {
		return Session{}, false
	}
	s := Session{
		Timeout: time.Duration(int32(binary.BigEndian.Uint32(buf[8:12]))) * time.Millisecond,
		ID:      int64(binary.BigEndian.Uint64(buf[12:20])),
	}
	n := int(int32(binary.BigEndian.Uint32(buf[20:24])))
	if n < 0 || 24+n > len(buf) {
		return Session{}, false
	}
	s.Passwd = slices.Clone(buf[24 : 24+n])
	return s, true
}

// awaitConnect runs on a connection's ConnectRequest: while reconnects of
// its session are held (HoldReconnects), it waits for their release. It
// reports false when the connection or the proxy closed meanwhile.
func (l *link) awaitConnect(buf []byte) bool {
	id, ok := parseConnectRequest(buf)
	if !ok || id == 0 {
		return true
	}
	l.p.mu.Lock()
	gate, seen := l.p.holds[id], l.p.holdSeen[id]
	if seen != nil {
		delete(l.p.holdSeen, id)
		close(seen)
	}
	l.p.mu.Unlock()
	if gate == nil {
		return true
	}
	select {
	case <-gate:
		return true
	case <-l.done:
		return false
	}
}

// noteConnectResponse records the session a connection carries.
func (l *link) noteConnectResponse(buf []byte) {
	s, ok := parseConnectResponse(buf)
	if !ok || s.ID == 0 || s.Timeout == 0 {
		return // the server refused to resume an ended session
	}
	l.session.Store(s.ID)
	l.p.mu.Lock()
	if l.p.sessions == nil {
		l.p.sessions = make(map[int64]Session)
	}
	l.p.sessions[s.ID] = s
	l.p.mu.Unlock()
}

// dropping reports whether the connection's packets are to be swallowed.
func (l *link) dropping() bool { return l.p.dropping.Load() || l.dropThis.Load() }
