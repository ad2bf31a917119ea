package e2e

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/zkherd/zkherd/internal/inert"
)

// TestErrorLineInert: an error line that quotes a server's text (here an
// AdminServer's error message holding ESC[8m, conceal, for a member whose
// four-letter words are refused) prints it escaped.
func TestErrorLineInert(t *testing.T) {
	inLane(t, commandLane)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"command":"srvr","error":"\u001b[8mhidden\u202e"}`)
	}))
	defer admin.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // every four-letter word refused, as on a production server
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				cmd := make([]byte, 4)
				io.ReadFull(c, cmd)
				io.WriteString(c, string(cmd)+" is not executed because it is not in the whitelist.\n")
			}()
		}
	}()
	tmp := []string{"TMPDIR=" + t.TempDir()} // no record of a "cluster up" is found
	args := []string{"cluster", "status", "--server", l.Addr().String(), "--admin-url", admin.URL + "/commands", "--timeout", "2s"}
	stdout, stderr, err := runZkherdEnv(t.Context(), tmp, checkedBin(t), args...)
	if code := exitCode(err); code == exit.OK {
		t.Fatalf("exit 0 from a member that does not answer; stderr %q", stderr)
	}
	for _, line := range strings.Split(stdout+stderr, "\n") {
		if !inert.Safe(line) {
			t.Errorf("printed server text a terminal acts on: %q", line)
		}
	}
	if !strings.Contains(stderr, `\x1b[8mhidden`) {
		t.Errorf("the server's text is not shown escaped: %q", stderr)
	}
}
