package recipes

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// handshakeDialer bounds each connection's handshake (the ConnectRequest
// and its response) to limit, as ZooKeeper's Java client does with its
// connect timeout (session timeout divided by the number of servers). A
// server may accept a connection and never read its request: one whose
// accept backlog overflowed when thousands of sessions reconnected at once
// after a restart, one still starting, or one behind a partition.
// go-zookeeper v1.0.4 waits for the response ten times its receive timeout
// (400 s at a 60 s session timeout, conn.authenticate), so the session
// would learn that the server expired it only minutes later, and every
// fair lock it queued in stands still meanwhile. With the bound it gives
// up after limit and tries the next server (or the same one again).
//
// limit is asked at each dial: once a session is established, Java's
// client divides the negotiated timeout, not the asked one.
//
// It also tells seen (when not nil) what the connection learns about the
// session: the timeout the server granted, and when it was last heard.
func handshakeDialer(dial zk.Dialer, limit func() time.Duration, seen *wireSeen) zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := dial(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &handshakeConn{Conn: c, until: time.Now().Add(limit()), seen: seen}, nil
	}
}

// wireSeen is what a session's connections learn from the bytes they
// carry, for bounds that must follow the server's clock.
type wireSeen struct {
	// negotiated is the session timeout of the last ConnectResponse
	// (nanoseconds; 0 before the first). The server clamps the asked
	// timeout to its minSessionTimeout..maxSessionTimeout, and it expires
	// the session on that value: every bound the client derives from the
	// session timeout must use it (Curator does too).
	negotiated atomic.Int64
	// touched is when the last request the server answered began to be
	// written (nanoseconds since base, monotonic): see answered.
	touched atomic.Int64
	base    time.Time
}

func newWireSeen() *wireSeen { return &wireSeen{base: time.Now()} }

func (w *wireSeen) now() int64 { return int64(time.Since(w.base)) }

// answered notes that the server answered a request whose write began at
// sent. The server renews a session's timeout whenever a packet from the
// client reaches it, so it renewed this one no sooner than sent, and
// cannot expire it sooner than the session timeout after that. Only an
// answer proves the request reached a live session: bytes read after a
// write may have arrived before it (a watch notification, or a reply to
// an earlier request, read late by a process that was paused, SIGSTOP or
// a long GC, while the servers expired its session), and taking them for
// the server's word renewed a session already gone (issue 21: a waiter
// paused past its session was granted on resuming). The time the read
// returns would not do either: it is later than the renewal by a round
// trip and by however late this process's goroutines ran.
func (w *wireSeen) answered(sent int64) {
	for {
		t := w.touched.Load()
		if sent <= t || w.touched.CompareAndSwap(t, sent) {
			return
		}
	}
}

// touchedAt is when the server last renewed the session, at the latest
// (see answered); base before any answer.
func (w *wireSeen) touchedAt() time.Time { return w.base.Add(time.Duration(w.touched.Load())) }

// connectResponse notes the session timeout of a ConnectResponse (its
// second int32, after the protocol version, in milliseconds). 0 is the
// server's answer for an expired session: not a timeout.
func (w *wireSeen) connectResponse(timeoutMs int32) {
	if timeoutMs > 0 {
		w.negotiated.Store(int64(time.Duration(timeoutMs) * time.Millisecond))
	}
}

// handshakeConn caps the read and write deadlines go-zookeeper sets at
// until while the handshake lasts; afterwards it passes them through.
//
// It assumes what go-zookeeper v1.0.4's authenticate does on a fresh
// connection: it writes the ConnectRequest, then reads the ConnectResponse
// (a 4-byte length, then that many bytes) as the first bytes read, before
// any other goroutine (sendLoop, recvLoop) uses the connection. So the
// handshake ends once 4+length bytes have been read, and the deadlines
// authenticate left set (capped here) are cleared then; sendLoop and
// recvLoop set their own before each write and read.
type handshakeConn struct {
	net.Conn
	until time.Time

	// done is set once the response is in; read without a lock on every
	// later read and deadline, which go-zookeeper sets per request. The
	// fields below it are only touched by Read, and only before done:
	// authenticate reads on one goroutine.
	done   atomic.Bool
	head   [4]byte // the response's length prefix, as read so far
	read   int     // bytes of the response read so far
	length int     // the response's body length, once head is complete
	timeo  [4]byte // the response's timeout field, as read so far
	seen   *wireSeen

	// sent holds when each request still unanswered began to be written,
	// in the order written (the ConnectRequest first): the server answers
	// a session's requests in that order (watch notifications aside), so
	// each reply answers the oldest. Written by go-zookeeper's send loop,
	// read by its receive loop.
	sentMu   sync.Mutex
	sent     []int64
	sentHead int // sent[:sentHead] are answered
	// The reply frames' headers, parsed as their bytes come in (only the
	// receive loop reads): a frame's length and xid so far, and the bytes
	// of its body still to pass.
	frameHead [8]byte
	frameHave int
	frameLeft int

	// Only readAhead touches these, on recvLoop's goroutine, after done.
	ahead []byte // read from the connection but not yet by the caller
	buf   []byte // ahead's backing array, readAheadSize bytes once used
}

func (c *handshakeConn) capped(t time.Time) time.Time {
	if !c.done.Load() && (t.IsZero() || t.After(c.until)) {
		return c.until
	}
	return t
}

func (c *handshakeConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.capped(t)) }

func (c *handshakeConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.capped(t))
}

func (c *handshakeConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.capped(t))
}

// Write notes when each request began to be written (see sent). It
// assumes what go-zookeeper v1.0.4 does: every request, the ConnectRequest
// and pings included, is one Write (conn.sendData, sendLoop,
// authenticate), and every request gets one reply.
func (c *handshakeConn) Write(b []byte) (int, error) {
	if c.seen != nil {
		c.sentMu.Lock()
		c.sent = append(c.sent, c.seen.now())
		c.sentMu.Unlock()
	}
	return c.Conn.Write(b)
}

// answered credits the oldest request not yet answered: a reply to it
// came in.
func (c *handshakeConn) answered() {
	c.sentMu.Lock()
	if c.sentHead == len(c.sent) {
		c.sentMu.Unlock()
		return // a reply to nothing written: credits nothing
	}
	sent := c.sent[c.sentHead]
	c.sentHead++
	switch {
	case c.sentHead == len(c.sent):
		c.sent, c.sentHead = c.sent[:0], 0
	case c.sentHead >= 64 && c.sentHead*2 >= len(c.sent):
		// Requests always in flight: keep the queue from growing.
		c.sent = c.sent[:copy(c.sent, c.sent[c.sentHead:])]
		c.sentHead = 0
	}
	c.sentMu.Unlock()
	c.seen.answered(sent)
}

// watchXid is the xid of a watch notification, which answers no request.
const watchXid = -1

// frames reads the reply frames' headers in p, bytes read from the
// server after the handshake, and credits each reply (any frame but a
// watch notification) to the request it answers.
func (c *handshakeConn) frames(p []byte) {
	if c.seen == nil {
		return
	}
	for len(p) > 0 {
		if c.frameLeft > 0 {
			k := min(c.frameLeft, len(p))
			c.frameLeft -= k
			p = p[k:]
			continue
		}
		k := copy(c.frameHead[c.frameHave:], p)
		c.frameHave += k
		p = p[k:]
		if c.frameHave < len(c.frameHead) {
			return
		}
		c.frameHave = 0
		length := int(binary.BigEndian.Uint32(c.frameHead[:4]))
		c.frameLeft = max(0, length-4)
		if int32(binary.BigEndian.Uint32(c.frameHead[4:8])) != watchXid {
			c.answered()
		}
	}
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	if c.done.Load() {
		return c.readAhead(b)
	}
	n, err := c.Conn.Read(b)
	for _, x := range b[:n] {
		switch {
		case c.read < 4:
			c.head[c.read] = x
		case c.read >= 8 && c.read < 12:
			// The body: protocolVersion int32, timeOut int32, ...
			c.timeo[c.read-8] = x
		}
		c.read++
		if c.read == 4 {
			c.length = int(binary.BigEndian.Uint32(c.head[:]))
		}
	}
	if c.read >= 4 && c.read >= 4+c.length {
		if c.seen != nil {
			c.answered() // the ConnectRequest's
			if c.read >= 12 {
				c.seen.connectResponse(int32(binary.BigEndian.Uint32(c.timeo[:])))
			}
		}
		c.done.Store(true)
		c.Conn.SetDeadline(time.Time{})
	}
	return n, err
}

// readAheadSize is how much readAhead asks of the connection at once: a
// watch event or a small reply with the next one's length prefix.
const readAheadSize = 1 << 10

// readAhead serves b from what an earlier read brought in, or reads up to
// readAheadSize bytes into a buffer first. go-zookeeper's recvLoop reads
// every packet in two calls (its 4-byte length, then its body), so a
// plain connection costs two system calls per packet; read ahead, one
// (or fewer, when packets arrive together) on the path that carries a
// lock's hand-off. Reads of readAheadSize or more (a long listing's body)
// go to the connection directly. Only recvLoop reads once the handshake is
// done, so no lock is needed.
func (c *handshakeConn) readAhead(b []byte) (int, error) {
	if len(c.ahead) == 0 {
		if len(b) >= readAheadSize {
			n, err := c.Conn.Read(b)
			c.frames(b[:n])
			return n, err
		}
		if c.buf == nil {
			c.buf = make([]byte, readAheadSize)
		}
		n, err := c.Conn.Read(c.buf)
		c.ahead = c.buf[:n]
		if n == 0 {
			return 0, err
		}
		c.frames(c.ahead)
		// err (with n > 0) is the connection's end: reported by the next read.
	}
	n := copy(b, c.ahead)
	c.ahead = c.ahead[n:]
	return n, nil
}
