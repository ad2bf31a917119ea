package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/zkherd/zkherd/internal/usermsg"
)

// TestErrorsNameNoPackage runs bad inputs through the CLI and checks each
// fails with one line that names no internal package ("recipes: ",
// "inspect: ", "fourlw: "...). None needs a server: every --server given
// refuses connections.
func TestErrorsNameNoPackage(t *testing.T) {
	inLane(t, commandLane)
	dir := t.TempDir()
	tmp := []string{"TMPDIR=" + dir} // no record of another user's or test's "cluster up" is found
	refused := "127.0.0.1:1"
	tests := [][]string{
		{"inspect", "--server", refused},
		{"inspect", "--server", "a b:1"},
		{"inspect", "--server", refused, "--auth", "nopassword"},
		{"inspect", "--server", refused, "--session-timeout", "1ms"},
		{"inspect", "--server", refused, "--tls-ca", filepath.Join(dir, "none.pem")},
		{"inspect", "--nosuchflag"},
		{"cluster", "status", "--server", refused},
		{"cluster", "status"},
		{"cluster", "status", "--server", refused, "-o", "xml"},
		{"cluster", "up", "--nodes", "2"},
		{"cluster", "kill"},
		{"export", "/", "--server", refused},
		{"export", "/"},
		{"import", filepath.Join(dir, "none.json"), "--into", "/x", "--server", refused},
		{"load", "--scenario", "nosuch"},
		{"load", "--scenario", "fair-lock", "--clients", "1", "--duration", "1s", "--server", refused, "--session-timeout", "1s", "--no-tui", "--out", filepath.Join(dir, "out")},
		{"report", "show", filepath.Join(dir, "none.json")},
		{"scenarios", "show", "nosuch"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, stderr, err := runZkherdEnv(t.Context(), tmp, checkedBin(t), args...)
			code := exitCode(err)
			if code == exit.OK {
				t.Fatalf("exit 0, want a failure; stderr %q", stderr)
			}
			var line string
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if strings.HasPrefix(l, "zkherd: ") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no \"zkherd: \" error line; stderr %q", stderr)
			}
			// As usermsg.Clean leaves it: no package prefix ("recipes: "),
			// no Go network text.
			if msg := strings.TrimPrefix(line, "zkherd: "); usermsg.Clean(msg) != msg {
				t.Errorf("error names an internal package or Go's network error: %q", line)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace in stderr: %q", stderr)
			}
		})
	}
}
