package distrib

import (
	"encoding/binary"
	"net"
	"testing"
)

// frame is a client frame: its length, xid and a body of n more bytes.
func frame(xid int32, n int) []byte {
	b := make([]byte, 8+n)
	binary.BigEndian.PutUint32(b, uint32(4+n))
	binary.BigEndian.PutUint32(b[4:], uint32(xid))
	return b
}

func TestRequestCounter(t *testing.T) {
	var c RequestCounter
	client, server := net.Pipe()
	defer server.Close()
	go func() {
		buf := make([]byte, 1024)
		for {
			if _, err := server.Read(buf); err != nil {
				return
			}
		}
	}()
	w := &countingConn{Conn: client, c: &c}
	handshake := frame(0, 40)                    // protocol version 0 read as an xid: not a request
	req := append(frame(1, 20), frame(-2, 4)...) // a request, then a ping
	split := frame(2, 30)
	for _, p := range [][]byte{handshake, req, split[:3], split[3:9], split[9:], frame(-8, 12), frame(3, 0)} {
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	client.Close()
	if got := c.Requests(); got != 3 {
		t.Errorf("counted %d requests, want 3 (xids 1, 2, 3; not the handshake, the ping or the watch reset)", got)
	}
}
