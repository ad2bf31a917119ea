package cluster

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/inert"
)

// hostileServer answers every four-letter word on loopback with replies
// whose text carries terminal escapes: a srvr whose Mode conceals the rest
// of the line, or whose Zxid does not parse (its value quoted in the
// error line).
func hostileServer(t *testing.T, srvr string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				cmd := make([]byte, 4)
				if _, err := io.ReadFull(bufio.NewReader(c), cmd); err != nil {
					return
				}
				switch string(cmd) {
				case "srvr":
					io.WriteString(c, srvr)
				case "mntr":
					io.WriteString(c, "zk_version\t3.8\x1b[8m\nzk_server_state\t\x1b[8mleader\n")
				default:
					io.WriteString(c, string(cmd)+" is not executed because it is not in the whitelist.\x1b[2J\n")
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestStatusInert: whatever the servers answer, cluster status prints no
// byte a terminal acts on (the text and JSON forms alike).
func TestStatusInert(t *testing.T) {
	const srvrHead = "Zookeeper version: 3.8.0\x1b]0;title\x07\nLatency min/avg/max: 0/0.0/0\nReceived: 1\nSent: 1\nConnections: 1\nOutstanding: 0\n"
	a := hostileServer(t, srvrHead+"Zxid: 0x1\nMode: \x1b[8mleader\u202e\nNode count: 5\n")
	b := hostileServer(t, srvrHead+"Zxid: 0x\x1b[8mzz\nMode: follower\nNode count: 5\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := Poll(ctx, Members([]string{a, b}, nil, nil), 2*time.Second)
	var out strings.Builder
	if err := st.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, line := range strings.Split(text, "\n") {
		if !inert.Safe(line) {
			t.Errorf("cluster status printed server text a terminal acts on: %q", line)
		}
	}
	if !strings.Contains(text, `\x1b[8mleader`) {
		t.Errorf("the hostile mode is not shown escaped:\n%q", text)
	}
}
