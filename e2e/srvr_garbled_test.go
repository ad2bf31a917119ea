package e2e

import (
	"io"
	"net"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/internal/exit"
)

// TestGarbledSrvrOneLine: a member whose srvr answer cannot be parsed (a
// proxy or another service on the port; a real server cannot send it) is
// reported in one plain line that names the field, without Go's parser
// text ("strconv.ParseInt: parsing ...: invalid syntax" was printed).
func TestGarbledSrvrOneLine(t *testing.T) {
	inLane(t, commandLane)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				cmd := make([]byte, 4)
				io.ReadFull(c, cmd)
				io.WriteString(c, "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.5/9\nReceived: lots\nSent: 12\nConnections: 1\nOutstanding: 0\nZxid: 0x1f\nMode: standalone\nNode count: 5\n")
			}()
		}
	}()
	tmp := []string{"TMPDIR=" + t.TempDir()} // no record of a "cluster up" is found
	args := []string{"cluster", "status", "--server", l.Addr().String(), "--timeout", "2s"}
	stdout, stderr, err := runZkherdEnv(t.Context(), tmp, checkedBin(t), args...)
	code := exitCode(err)
	out := stdout + stderr
	t.Logf("exit %d:\n%s", code, out)
	if code == exit.OK {
		t.Errorf("exit 0 from a member whose answer is not understood")
	}
	for _, bad := range []string{"strconv", "ParseInt", "invalid syntax", "fourlw:", "panic", "goroutine"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q", bad)
		}
	}
	if !strings.Contains(out, `Received "lots"`) {
		t.Errorf("output does not name the field the answer got wrong")
	}
}
