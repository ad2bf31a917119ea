package recipes

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestUnansweredHandshakeMovesOn: a server that accepts a connection and
// never reads its ConnectRequest (its accept backlog overflowed when
// 10,000 sessions reconnected after a restart) must not hold the session
// for go-zookeeper's ten receive timeouts (about 27 s at a 4 s session
// timeout, 400 s at 60 s). The session gives up that handshake after its
// share of the session timeout (4 s / 2 servers) and connects through its
// next attempt. Before the fix the session stayed connecting past the
// session timeout: a reconnect learnt only ~27 s later that the server
// had expired it, and fair locks it queued in stood still meanwhile.
func TestUnansweredHandshakeMovesOn(t *testing.T) {
	direct := sharedServers(t)[0]
	const timeout = 4 * time.Second
	t.Run("open", func(t *testing.T) {
		p := newProxy(t, direct)
		p.SetDropping(true) // the first connection's ConnectRequest goes nowhere
		var dials atomic.Int32
		dial := func(network, _ string, d time.Duration) (net.Conn, error) {
			addr := direct
			if dials.Add(1) == 1 {
				addr = p.Addr()
			}
			return net.DialTimeout(network, addr, d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout+2*time.Second)
		defer cancel()
		s, err := NewSession(ctx, []string{p.Addr(), direct}, WithSessionTimeout(timeout), WithDialer(dial))
		if err != nil {
			t.Fatalf("NewSession whose first server never answers the handshake: %v; want a session through the second within %v", err, timeout+2*time.Second)
		}
		s.Close()
	})

	t.Run("reconnect", func(t *testing.T) {
		p := newProxy(t, direct)
		var dials atomic.Int32
		dial := func(network, _ string, d time.Duration) (net.Conn, error) {
			addr := direct
			if dials.Add(1) <= 2 { // the session's first connection and its first reconnection
				addr = p.Addr()
			}
			return net.DialTimeout(network, addr, d)
		}
		s := newTestSession(t, []string{p.Addr(), direct}, WithSessionTimeout(timeout), WithDialer(dial))
		id := s.ID()
		arrived, release := p.HoldReconnects(id)
		defer release()
		p.CutAll()
		select {
		case <-arrived:
		case <-time.After(timeout):
			t.Fatal("the session did not try to reconnect through the proxy")
		}
		held := time.Now()
		// Connected again (the session resumed before the server expired
		// it) or told it expired: either way no longer stuck in the held
		// handshake.
		waitFor(t, timeout+2*time.Second, "the session to give up the unanswered handshake", func() bool {
			st := s.State()
			return st == StateConnected || st == StateExpired
		})
		if got := s.State(); got == StateConnected && s.ID() != id {
			t.Errorf("session 0x%x after reconnecting, want 0x%x resumed", s.ID(), id)
		}
		t.Logf("%v %v after the handshake was held", s.State(), time.Since(held).Round(time.Millisecond))
	})
}

// TestReadAheadKeepsPackets reads packets as go-zookeeper's recvLoop does
// (a 4-byte length, then the body) through a handshakeConn whose handshake
// is done, while the peer writes them in odd-sized pieces: every packet,
// small or longer than the read-ahead buffer, comes out whole and in order,
// and the connection's end is reported after the last byte.
func TestReadAheadKeepsPackets(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	c := &handshakeConn{Conn: client}
	c.done.Store(true)
	var stream []byte
	var want [][]byte
	for i, size := range []int{0, 1, 20, 700, readAheadSize - 4, readAheadSize, 3 * readAheadSize, 5} {
		body := bytes.Repeat([]byte{byte('a' + i)}, size)
		want = append(want, body)
		stream = binary.BigEndian.AppendUint32(stream, uint32(size))
		stream = append(stream, body...)
	}
	go func() {
		defer server.Close()
		for rest, piece := stream, 1; len(rest) > 0; piece = piece*3%1500 + 1 {
			n := min(piece, len(rest))
			if _, err := server.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
	}()
	for i, w := range want {
		var head [4]byte
		if _, err := io.ReadFull(c, head[:]); err != nil {
			t.Fatalf("packet %d: length: %v", i, err)
		}
		got := make([]byte, binary.BigEndian.Uint32(head[:]))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatalf("packet %d: body: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("packet %d: got %d bytes %.20q..., want %d bytes %.20q...", i, len(got), got, len(w), w)
		}
	}
	if n, err := c.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("after the last packet: read %d, %v; want 0, EOF", n, err)
	}
}

// TestOnlyAnswersRenew: the time the server last renewed the session (at
// the latest) moves to a request's write only when the reply to that
// request comes in. A watch notification read after the write, or a reply
// to an earlier request, may have been sent before the write reached the
// server (a process paused past its session reads on resuming what the
// server sent before expiring it): taken as the server's word, it renewed
// a session already gone, and a waiter paused past its session was
// granted the lock on resuming.
func TestOnlyAnswersRenew(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	seen := newWireSeen()
	c := &handshakeConn{Conn: client, seen: seen}
	c.done.Store(true)
	frame := func(xid int32, body int) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(4+body))
		b = binary.BigEndian.AppendUint32(b, uint32(xid))
		return append(b, make([]byte, body)...)
	}
	// write sends a request through c while the server side reads it
	// (net.Pipe has no buffer).
	write := func(xid int32) {
		t.Helper()
		req := frame(xid, 8)
		got := make(chan error, 1)
		go func() { _, err := io.ReadFull(server, make([]byte, len(req))); got <- err }()
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	// deliver has the server send f and reads it through c as recvLoop does.
	deliver := func(f []byte) {
		t.Helper()
		go server.Write(f)
		var head [4]byte
		if _, err := io.ReadFull(c, head[:]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, binary.BigEndian.Uint32(head[:]))); err != nil {
			t.Fatal(err)
		}
	}
	start := seen.touchedAt()
	write(1)
	deliver(frame(watchXid, 40)) // a notification: answers nothing
	if got := seen.touchedAt(); !got.Equal(start) {
		t.Fatalf("after a notification the session counts as renewed at %v, want unchanged", got.Sub(start))
	}
	write(2)
	deliver(frame(1, 16)) // the reply to request 1, not to 2
	first := seen.touchedAt()
	if !first.After(start) {
		t.Fatal("the reply to request 1 renewed nothing")
	}
	deliver(frame(2, 16))
	second := seen.touchedAt()
	if !second.After(first) {
		t.Fatalf("the reply to request 2 renewed the session at %v after request 1's write, want later", second.Sub(first))
	}
	deliver(frame(5, 16)) // a reply to nothing written
	if got := seen.touchedAt(); !got.Equal(second) {
		t.Fatalf("a reply to nothing moved the renewal by %v", got.Sub(second))
	}
}
