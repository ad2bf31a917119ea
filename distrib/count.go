package distrib

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// RequestCounter counts the requests a session sends to its servers: the
// cost of a distributed run's coordination (plan, barriers, parts, live
// parts) on the servers it uses. It reads the client's side of the
// ZooKeeper protocol as it is written: frames of a 4-byte length; the
// first frame of a connection is its handshake, and of the others only
// those with a request's xid (0 or more) count, not pings (-2), auth
// (-4) or watch resets (-8). It needs plaintext connections: over TLS
// the stream is encrypted (the caller then says the count is unknown).
type RequestCounter struct{ n atomic.Int64 }

// Requests is how many requests were sent so far.
func (c *RequestCounter) Requests() int64 { return c.n.Load() }

// Dialer is a zk.Dialer (recipes.WithDialer) whose connections count.
func (c *RequestCounter) Dialer() zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		conn, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn, c: c}, nil
	}
}

// countingConn follows the frames written on one connection.
type countingConn struct {
	net.Conn
	c      *RequestCounter
	frames int64
	head   []byte // the current frame's first bytes: length, then xid
	left   int64  // bytes of the current frame's body still to come
}

func (w *countingConn) Write(p []byte) (int, error) {
	w.scan(p)
	return w.Conn.Write(p)
}

// scan follows the frames in p, which continues what was written before.
func (w *countingConn) scan(p []byte) {
	for len(p) > 0 {
		if w.left > 0 && len(w.head) >= 8 {
			n := min(int64(len(p)), w.left)
			w.left -= n
			p = p[n:]
			if w.left == 0 {
				w.head = w.head[:0]
			}
			continue
		}
		// Reading the length (4 bytes), then the xid (4 more).
		had := len(w.head)
		take := min(8-had, len(p))
		w.head = append(w.head, p[:take]...)
		p = p[take:]
		if had < 4 && len(w.head) >= 4 {
			w.left = int64(binary.BigEndian.Uint32(w.head))
		}
		if len(w.head) < 8 {
			continue
		}
		w.left -= 4 // the xid is the body's first 4 bytes
		if w.frames > 0 && int32(binary.BigEndian.Uint32(w.head[4:8])) >= 0 {
			w.c.n.Add(1)
		}
		w.frames++
		if w.left <= 0 {
			w.head, w.left = w.head[:0], 0
		}
	}
}
