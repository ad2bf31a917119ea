package e2e

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// silentPort listens on loopback and accepts connections without ever
// answering: a port that is not ZooKeeper's (an HTTP server waiting for a
// request looks the same to a ZooKeeper client).
func silentPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return l.Addr().String()
}

// TestMessagesNameTheFix (issue 22, finding 8): what a user typed wrong,
// or where zkherd cannot work, is one line naming the problem and the fix,
// never a library's text (strconv.ParseInt, "time: missing unit",
// "bubbletea: could not open TTY", go-zookeeper's "authentication failed
// ... i/o timeout" for a port that is not ZooKeeper's). Each runs the
// binary in a new session, with no controlling terminal.
func TestMessagesNameTheFix(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	silent := silentPort(t)
	out := t.TempDir()
	tests := []struct {
		name      string
		args      []string
		want      string
		forbidden []string
	}{
		{"not a number", []string{"load", "--scenario", "fair-lock", "--clients", "abc"},
			`zkherd: --clients "abc": not a whole number; give one such as --clients 100`, []string{"strconv", "ParseInt"}},
		{"duration without unit", []string{"load", "--scenario", "fair-lock", "--duration", "30"},
			`zkherd: --duration "30": a duration needs a unit: write it such as --duration 30s`, []string{"time:", "missing unit"}},
		{"no terminal", []string{"inspect", "--server", ens.ConnectString()},
			"zkherd: inspect draws its screen on a terminal, and this process has none (no /dev/tty): run it in a terminal", []string{"bubbletea", "TTY:"}},
		{"not ZooKeeper, inspect", []string{"inspect", "--server", silent, "--session-timeout", "2s", "--connect-timeout", "8s"},
			"the port accepted the connection but gave no ZooKeeper handshake reply (is that ZooKeeper's client port", []string{"authentication failed", "i/o timeout", "closed network connection"}},
		{"not ZooKeeper, load", []string{"load", "--scenario", "fair-lock", "--clients", "1", "--duration", "1s", "--session-timeout", "2s", "--no-tui", "--out", filepath.Join(out, "l"), "--server", silent},
			"the port accepted the connection but gave no ZooKeeper handshake reply (is that ZooKeeper's client port", []string{"authentication failed", "i/o timeout", "deadline exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // two of them wait out a connect timeout
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tt.args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
			b, err := cmd.CombinedOutput()
			got := strings.TrimSpace(string(b))
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exit.Usage {
				t.Errorf("exit: %v, want %d", err, exit.Usage)
			}
			if strings.Count(got, "\n") > 0 {
				t.Errorf("output is %d lines, want one:\n%s", strings.Count(got, "\n")+1, got)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got  %q\nwant it to contain %q", got, tt.want)
			}
			for _, f := range tt.forbidden {
				if strings.Contains(got, f) {
					t.Errorf("output %q contains the library's %q", got, f)
				}
			}
		})
	}
}
