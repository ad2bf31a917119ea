// Package faultproxy is a TCP proxy between ZooKeeper clients and one
// server that injects faults: it cuts connections (all at once, or right
// before or after forwarding a chosen request), delays packets, or turns
// into a black hole. It understands just enough of ZooKeeper's wire
// protocol to frame packets and read each request's opcode, so a test can
// say "drop the connection right after the next create reaches the server"
// and the client sees exactly that: a request sent, its reply lost.
package faultproxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ZooKeeper request opcodes (org.apache.zookeeper.ZooDefs.OpCode).
const (
	OpCreate          int32 = 1
	OpDelete          int32 = 2
	OpExists          int32 = 3
	OpGetData         int32 = 4
	OpSetData         int32 = 5
	OpGetChildren     int32 = 8
	OpSync            int32 = 9
	OpPing            int32 = 11
	OpGetChildren2    int32 = 12
	OpCheck           int32 = 13
	OpMulti           int32 = 14
	OpCreate2         int32 = 15
	OpCreateContainer int32 = 19
	OpCreateTTL       int32 = 21
	OpClose           int32 = -11
	OpSetAuth         int32 = 100
	OpSetWatches      int32 = 101
	// OpConnect is not a ZooKeeper opcode: it stands for the ConnectRequest
	// that opens every connection (the one packet without a request header).
	OpConnect int32 = -1 << 20
)

// IsCreate reports the opcodes that create a node.
func IsCreate(op int32) bool {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL:
		return true
	}
	return false
}

// maxFrame bounds a packet's length; a larger prefix means the stream is
// not ZooKeeper's, and the connection is cut.
const maxFrame = 64 << 20

// replyWait bounds how long a connection cut after forwarding a request
// keeps its server side open for the reply.
const replyWait = 2 * time.Second

// Action is what the proxy does with one client request.
type Action int

const (
	// Forward passes the request on.
	Forward Action = iota
	// CutAfter forwards the request, then drops the client's connection at
	// once. The server side stays open until the server's reply arrives
	// (discarded), so the request is certainly executed and its reply
	// certainly lost.
	CutAfter
	// CutBefore drops the connection without forwarding the request.
	CutBefore
)

// Request describes one client packet for OnRequest.
type Request struct {
	Conn int   // connection number, from 1, in accept order
	Op   int32 // opcode, or OpConnect for the first packet
	Xid  int32 // 0 for OpConnect
	Len  int   // packet length without the 4-byte prefix
	// Session is the session the connection carries, 0 before the
	// handshake's reply.
	Session int64
}

// Proxy forwards connections from Addr to one ZooKeeper server.
type Proxy struct {
	target string
	ln     net.Listener
	stop   func() bool // unregisters the ctx hook

	delay    atomic.Int64 // time.Duration
	dropping atomic.Bool

	mu        sync.Mutex
	links     map[*link]struct{}
	nextID    int
	onRequest func(Request) Action
	cutDone   func() // set by CutAfter/CutBefore: runs when a cut completes
	closed    bool
	sessions  map[int64]Session       // by id, learnt from ConnectResponses (session.go)
	holds     map[int64]chan struct{} // reconnects held back, by session id
	holdSeen  map[int64]chan struct{} // closed when a held reconnect arrives

	wg sync.WaitGroup
}

// New listens on a free loopback port and forwards every connection to
// target ("host:port"). The proxy closes when ctx ends or Close is called.
func New(ctx context.Context, target string) (*Proxy, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{target: target, ln: ln, links: make(map[*link]struct{})}
	p.stop = context.AfterFunc(ctx, func() { p.Close() })
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the "host:port" clients should connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting, cuts every connection and waits for the proxy's
// goroutines. Idempotent.
func (p *Proxy) Close() error {
	p.stop()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	return err
}

// CutAll drops every open connection, both sides, and returns how many.
// Clients reconnect through the proxy as usual.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.closeBoth()
	}
	return len(links)
}

// Conns is the number of open connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// SetDelay holds every packet, in both directions, for d before passing it
// on (order is kept). 0 turns delays off.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// SetDropping turns the proxy into a black hole (true): connections are
// still accepted and packets still read, but none is passed on in either
// direction, as when a network partition swallows traffic. Turning it off
// cuts the connections that lost packets (their streams are no longer
// consistent); new and untouched ones forward again.
func (p *Proxy) SetDropping(on bool) {
	p.dropping.Store(on)
	if on {
		return
	}
	p.mu.Lock()
	var lossy []*link
	for l := range p.links {
		if l.dropped.Load() {
			lossy = append(lossy, l)
		}
	}
	p.mu.Unlock()
	for _, l := range lossy {
		l.closeBoth()
	}
}

// OnRequest installs fn, called for every client packet before it is
// forwarded (from the connection's reader goroutine: it must be quick and
// safe for concurrent use). nil removes it.
func (p *Proxy) OnRequest(fn func(Request) Action) {
	p.mu.Lock()
	p.onRequest, p.cutDone = fn, nil
	p.mu.Unlock()
}

// CutAfter drops the connection right after forwarding the count-th next
// request with opcode op (counted over all connections), once; see the
// CutAfter action. It replaces any OnRequest hook. done is closed when the
// cut is complete: the server has replied to that request (so it has been
// executed) or replyWait passed without a reply.
func (p *Proxy) CutAfter(op int32, count int) (done <-chan struct{}) {
	return p.cutOn(op, count, CutAfter)
}

// CutBefore drops the connection instead of forwarding the count-th next
// request with opcode op, once. It replaces any OnRequest hook. done is
// closed once the connection is cut.
func (p *Proxy) CutBefore(op int32, count int) (done <-chan struct{}) {
	return p.cutOn(op, count, CutBefore)
}

func (p *Proxy) cutOn(op int32, count int, action Action) <-chan struct{} {
	var seen atomic.Int64
	ch := make(chan struct{})
	var once sync.Once
	p.mu.Lock()
	p.onRequest = func(r Request) Action {
		if r.Op != op || seen.Add(1) != int64(count) {
			return Forward
		}
		return action
	}
	p.cutDone = func() { once.Do(func() { close(ch) }) }
	p.mu.Unlock()
	return ch
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			client.Close()
			return
		}
		p.nextID++
		l := &link{p: p, id: p.nextID, client: client, done: make(chan struct{})}
		l.pendingXid.Store(noXid)
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go l.run()
	}
}

func (p *Proxy) hook() (func(Request) Action, func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.onRequest, p.cutDone
}

// noXid marks no reply awaited.
const noXid = int64(-1 << 40)

// link is one client connection and its server connection.
type link struct {
	p      *Proxy
	id     int
	client net.Conn
	server net.Conn

	dropped atomic.Bool
	// pendingXid is the xid whose reply closes the server side after a
	// CutAfter (noXid when none).
	pendingXid atomic.Int64

	clientOnce, doneOnce sync.Once
	// serverMu guards server and serverClosed: the link can be cut
	// (CutConn, CutSession, CutAll) while run still dials the server.
	serverMu     sync.Mutex
	serverClosed bool
	// done is closed when both sides are cut.
	done chan struct{}

	replyTimer atomic.Pointer[time.Timer]
	cutDone    func() // to run when a CutAfter completes

	// The session the connection carries (see session.go).
	session  atomic.Int64 // 0 until the server's ConnectResponse
	dropThis atomic.Bool  // this connection alone is a black hole
}

type frame struct {
	data []byte // with the length prefix
	due  time.Time
	// cut: after writing this frame, drop the client side.
	cut bool
}

func (l *link) run() {
	defer l.p.wg.Done()
	defer func() {
		if t := l.replyTimer.Load(); t != nil {
			t.Stop()
		}
		l.p.mu.Lock()
		delete(l.p.links, l)
		l.p.mu.Unlock()
	}()
	var d net.Dialer
	server, err := d.Dial("tcp", l.p.target)
	if err != nil {
		l.client.Close()
		return
	}
	if !l.setServer(server) {
		return // cut while dialing: both sides are closed
	}

	var wg sync.WaitGroup
	toServer := make(chan frame, 64)
	toClient := make(chan frame, 64)
	wg.Add(4)
	go func() { defer wg.Done(); l.readClient(toServer) }()
	go func() { defer wg.Done(); l.write(l.server, toServer, l.closeBoth) }()
	go func() { defer wg.Done(); l.readServer(toClient) }()
	go func() { defer wg.Done(); l.write(l.client, toClient, l.clientGone) }()
	wg.Wait()
}

func (l *link) closeClient() { l.clientOnce.Do(func() { l.client.Close() }) }

// setServer records the server side of the link, or closes it and
// reports false when the link was cut while it was being dialed.
func (l *link) setServer(c net.Conn) bool {
	l.serverMu.Lock()
	defer l.serverMu.Unlock()
	if l.serverClosed {
		c.Close()
		return false
	}
	l.server = c
	return true
}

// closeServer closes the server side, once; a link cut before its server
// side is dialed closes it as soon as it is (setServer).
func (l *link) closeServer() {
	l.serverMu.Lock()
	defer l.serverMu.Unlock()
	if l.serverClosed {
		return
	}
	l.serverClosed = true
	if l.server != nil {
		l.server.Close()
	}
}
func (l *link) closeBoth() {
	l.closeClient()
	l.closeServer()
	l.doneOnce.Do(func() { close(l.done) })
}

// finishCut completes a CutAfter: the reply came or will not.
func (l *link) finishCut() {
	l.closeBoth()
	if l.cutDone != nil {
		l.cutDone()
	}
}

// clientGone closes the client side, and the server side too unless a
// reply is awaited there.
func (l *link) clientGone() {
	if l.pendingXid.Load() == noXid {
		l.closeBoth()
		return
	}
	l.closeClient()
}

// readFrame reads one length-prefixed packet, prefix included.
func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("faultproxy: packet of %d bytes: not a ZooKeeper stream", n)
	}
	buf := make([]byte, 4+int(n))
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, err
	}
	return buf, nil
}

func (l *link) due() time.Time {
	return time.Now().Add(time.Duration(l.p.delay.Load()))
}

func (l *link) readClient(out chan<- frame) {
	defer close(out)
	first := true
	for {
		buf, err := readFrame(l.client)
		if err != nil {
			l.clientGone()
			return
		}
		req := Request{Conn: l.id, Op: OpConnect, Len: len(buf) - 4, Session: l.session.Load()}
		if !first && len(buf) >= 12 {
			req.Xid = int32(binary.BigEndian.Uint32(buf[4:8]))
			req.Op = int32(binary.BigEndian.Uint32(buf[8:12]))
		}
		if first && !l.awaitConnect(buf) {
			l.closeBoth()
			return
		}
		first = false
		if l.dropping() {
			l.dropped.Store(true)
			continue
		}
		action := Forward
		fn, cutDone := l.p.hook()
		if fn != nil {
			action = fn(req)
		}
		switch action {
		case CutBefore:
			l.closeBoth()
			if cutDone != nil {
				cutDone()
			}
			return
		case CutAfter:
			l.cutDone = cutDone
			if req.Op != OpConnect {
				l.pendingXid.Store(int64(req.Xid))
				l.replyTimer.Store(time.AfterFunc(replyWait, l.finishCut))
			}
			out <- frame{data: buf, due: l.due(), cut: true}
			return
		}
		out <- frame{data: buf, due: l.due()}
	}
}

func (l *link) readServer(out chan<- frame) {
	defer close(out)
	first := true
	for {
		buf, err := readFrame(l.server)
		if err != nil {
			l.closeBoth()
			return
		}
		if pending := l.pendingXid.Load(); pending != noXid {
			// The client side is cut: discard everything up to the reply
			// it will never see, then cut the server side too.
			if !first && len(buf) >= 8 && int64(int32(binary.BigEndian.Uint32(buf[4:8]))) == pending {
				l.finishCut()
				return
			}
			continue
		}
		if first {
			l.noteConnectResponse(buf)
		}
		first = false
		if l.dropping() {
			l.dropped.Store(true)
			continue
		}
		out <- frame{data: buf, due: l.due()}
	}
}

// write passes frames on to w, each no earlier than its due time; onErr
// runs when w fails. It drains in until the reader closes it, so the reader
// never blocks on a dead peer.
func (l *link) write(w net.Conn, in <-chan frame, onErr func()) {
	broken := false
	for f := range in {
		if broken {
			continue
		}
		if wait := time.Until(f.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
				broken = true
				continue
			}
		}
		if _, err := w.Write(f.data); err != nil {
			broken = true
			onErr()
			continue
		}
		if f.cut {
			l.closeClient()
			if l.pendingXid.Load() == noXid {
				l.finishCut() // a cut ConnectRequest: no reply to wait for
			}
		}
	}
}
