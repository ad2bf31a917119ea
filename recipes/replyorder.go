package recipes

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// replyOrderDialer orders a data race inside go-zookeeper v1.0.4. After
// each reconnection its connection loop reads lastZxid for the SetWatches
// request (sendSetWatches, only when the session has watches) while the
// new connection's receive loop may already write lastZxid for a reply,
// with nothing ordering the two. The race detector reports it on
// reconnections with watches and replies in flight (chaos runs, cut
// connections, a reply too large for the buffer), and -race test runs
// failed on it.
//
// The wrapper holds back, on a reconnection of a session that once asked
// for a watch, the first reply that would write lastZxid (xid >= 0, zxid >
// 0) until go-zookeeper has written its SetWatches request, which it
// builds after reading lastZxid: the channel closed by that write orders
// the read before the write. Frames that do not write lastZxid pass
// (pings, watch events, the reply to resent credentials, whose zxid is 0),
// so resending credentials, which waits for its reply before anything else
// is sent, is not held up.
//
// Assumptions, each with its bound: go-zookeeper sends SetWatches only
// when it still has watches; a session whose watches have all fired sends
// none, and its first reply then waits replyOrderWait (once per
// reconnection). A request is one Write (go-zookeeper's send loop), so its
// opcode is at bytes 8-12 of that write. ZooKeeper's behaviour is the same
// either way; only the client's bookkeeping is ordered.
func replyOrderDialer(dial zk.Dialer) zk.Dialer {
	watched := new(atomic.Bool) // the session ever asked for a watch
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := dial(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &replyOrderConn{Conn: c, watched: watched, open: !watched.Load(), setWatches: make(chan struct{})}, nil
	}
}

// replyOrderWait bounds how long a reconnection's first reply waits for a
// SetWatches request that may not come (every watch fired meanwhile).
const replyOrderWait = 300 * time.Millisecond

// ZooKeeper opcodes the wrapper reads in requests.
const (
	opExists       = 3
	opGetData      = 4
	opGetChildren  = 8
	opGetChildren2 = 12
	opSetWatches   = 101
)

type replyOrderConn struct {
	net.Conn
	watched    *atomic.Bool
	setWatches chan struct{} // closed once SetWatches is written
	once       sync.Once
	wrote      atomic.Bool // the ConnectRequest has been written

	// Read side only (go-zookeeper reads on one goroutine at a time).
	open      bool     // no more frames to hold back on this connection
	handshook bool     // the ConnectResponse has been read through
	head      [16]byte // a frame's length and reply header, read ahead
	have, off int      // bytes in head, bytes of head handed out
	left      int      // bytes of the current frame after head still to pass
}

func (c *replyOrderConn) Write(b []byte) (int, error) {
	if !c.wrote.Swap(true) {
		return c.Conn.Write(b) // the ConnectRequest: no opcode
	}
	if len(b) >= 13 {
		switch binary.BigEndian.Uint32(b[8:12]) {
		case opSetWatches:
			c.once.Do(func() { close(c.setWatches) })
		case opExists, opGetData, opGetChildren, opGetChildren2:
			if b[len(b)-1] != 0 { // the request's last field: watch
				c.watched.Store(true)
			}
		}
	}
	return c.Conn.Write(b)
}

func (c *replyOrderConn) Read(b []byte) (int, error) {
	if c.off < c.have { // hand out what was read ahead
		n := copy(b, c.head[c.off:c.have])
		c.off += n
		return n, nil
	}
	if c.open {
		return c.Conn.Read(b)
	}
	if c.left > 0 { // the rest of a frame that was let through
		n, err := c.Conn.Read(b[:min(len(b), c.left)])
		c.left -= n
		return n, err
	}
	// At a frame's start: read its length and reply header ahead. Every
	// frame is longer (a ConnectResponse 40 bytes, a reply 20 at least).
	c.have, c.off = 0, 0
	n, err := io.ReadFull(c.Conn, c.head[:])
	if err != nil {
		c.open = true // the connection is ending: pass the rest through
		return copy(b, c.head[:n]), err
	}
	c.have = n
	length := int(binary.BigEndian.Uint32(c.head[0:4]))
	switch {
	case length < 12:
		c.open = true // not a frame this wrapper understands
	case !c.handshook:
		c.handshook = true
		c.left = 4 + length - len(c.head)
	default:
		xid := int32(binary.BigEndian.Uint32(c.head[4:8]))
		zxid := int64(binary.BigEndian.Uint64(c.head[8:16]))
		if xid >= 0 && zxid > 0 { // this reply writes lastZxid
			t := time.NewTimer(replyOrderWait)
			select {
			case <-c.setWatches:
			case <-t.C:
			}
			t.Stop()
			c.open = true
		} else {
			c.left = 4 + length - len(c.head)
		}
	}
	if c.left < 0 {
		c.left, c.open = 0, true
	}
	k := copy(b, c.head[:c.have])
	c.off = k
	return k, nil
}
