package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/recipes"
)

// TestTLSOnlyEnsemble runs zkherd against an ensemble with no plain client
// port (issue 15): cluster status, export with digest auth, a short load
// and inspect (in tmux) work with the TLS flags, and each fails in one
// line naming the fix without them.
func TestTLSOnlyEnsemble(t *testing.T) {
	inLane(t, terminalLane)
	ens := enstest.StartTLS(t, 1)
	server := ens.ConnectString()
	files := ens.TLS()
	tlsFlags := []string{"--tls-ca", files.CA, "--tls-cert", files.Cert, "--tls-key", files.Key}
	with := func(args ...string) []string { return append(append(args, "--server", server), tlsFlags...) }
	without := func(args ...string) []string { return append(args, "--server", server) }
	run := func(t *testing.T, args []string) (code int, stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		stdout, stderr, err := runZkherd(ctx, checkedBin(t), args...)
		return exitCode(err), stdout, stderr
	}
	// oneLine checks a failure's last stderr line: it names the fix and
	// no internal package.
	oneLine := func(t *testing.T, stderr, want string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "zkherd: ") || !strings.Contains(last, want) {
			t.Errorf("error line %q, want one naming %q", last, want)
		}
		// Every line main prints is as usermsg.Clean leaves it: no package
		// prefix ("recipes: "), no Go network text.
		if msg := strings.TrimPrefix(last, "zkherd: "); usermsg.Clean(msg) != msg {
			t.Errorf("error line names an internal package or Go's network error: %q", last)
		}
	}

	t.Run("cluster status", func(t *testing.T) {
		code, out, stderr := run(t, with("cluster", "status"))
		if code != exit.OK || !strings.Contains(out, "standalone") {
			t.Fatalf("with TLS: exit %d, stdout:\n%s\nstderr: %s", code, out, stderr)
		}
		if !strings.Contains(out, "12 of 12 answer") {
			t.Errorf("four-letter words over TLS do not all answer:\n%s", out)
		}
		code, _, stderr = run(t, without("cluster", "status", "--timeout", "1s"))
		if code != exit.Usage {
			t.Errorf("without TLS: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "needs --tls-ca")
		// The handshake fails at once when the CA is unknown; the bound is
		// only for a loaded machine, where a TLS handshake with a JVM took
		// over the 1 s above and the line said "no answer in time".
		code, _, stderr = run(t, append(without("cluster", "status", "--timeout", "30s"), "--tls-cert", files.Cert, "--tls-key", files.Key))
		if code != exit.Usage {
			t.Errorf("without the CA: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "unknown authority")
	})

	t.Run("digest auth over TLS", func(t *testing.T) {
		cfg, err := connstr.TLS{CA: files.CA, Cert: files.Cert, Key: files.Key}.Config()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := recipes.NewSession(ctx, ens.Servers(), recipes.WithTLS(cfg), recipes.WithDigestAuth("alice:secret"))
		if err != nil {
			t.Fatalf("session over TLS with digest auth: %v", err)
		}
		defer s.Close()
		if _, err := s.Conn().Create("/private", []byte("for alice"), 0, zk.DigestACL(zk.PermAll, "alice", "secret")); err != nil {
			t.Fatalf("create with a digest ACL: %v", err)
		}
		code, out, stderr := run(t, append(with("export", "/private"), "--auth", "alice:secret"))
		if code != exit.OK || !strings.Contains(out, `"data": "for alice"`) {
			t.Fatalf("export with --auth over TLS: exit %d, stdout %s, stderr %s", code, out, stderr)
		}
		code, _, stderr = run(t, with("export", "/private"))
		if code != exit.Usage {
			t.Errorf("export without --auth: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "give --auth")
		code, _, stderr = run(t, append(with("export", "/private"), "--auth", "alice:wrong"))
		if code != exit.Usage {
			t.Errorf("export with a wrong password: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "give --auth")
	})

	t.Run("load", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := run(t, append(with("load", "--scenario", "fair-lock", "--clients", "5", "--duration", "2s", "--no-tui"), "--out", out))
		if code != exit.OK || !strings.Contains(stdout, "RESULT: PASS") {
			t.Fatalf("load over TLS: exit %d, stdout:\n%s\nstderr: %s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "server packets/acquisition") {
			t.Errorf("load over TLS read no server counters (mntr over TLS):\n%s", stdout)
		}
		// Without the TLS flags: refused before any session is tried (the
		// sessions would retry until their timeout), in one line naming
		// the flags.
		code, _, stderr = run(t, append(without("load", "--scenario", "fair-lock", "--clients", "2", "--duration", "1s", "--no-tui"), "--out", out+"2"))
		if code != exit.Usage {
			t.Errorf("load without TLS against a TLS-only server: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "accepts only TLS connections: it needs --tls-ca")
		code, _, stderr = run(t, append(without("load", "--scenario", "fair-lock", "--clients", "2", "--duration", "1s", "--no-tui"), "--tls-ca", files.CA, "--out", out+"3"))
		if code != exit.Usage {
			t.Errorf("load without a client certificate: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "give --tls-cert and --tls-key")
	})

	t.Run("inspect", func(t *testing.T) {
		code, _, stderr := run(t, without("inspect"))
		if code != exit.Usage {
			t.Errorf("inspect without TLS: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "accepts only TLS connections: it needs --tls-ca")
		code, _, stderr = run(t, without("export", "/"))
		if code != exit.Usage {
			t.Errorf("export without TLS: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "accepts only TLS connections: it needs --tls-ca")
		code, _, stderr = run(t, append(without("inspect"), "--tls-ca", files.CA))
		if code != exit.Usage {
			t.Errorf("inspect without a client certificate: exit %d, want %d", code, exit.Usage)
		}
		oneLine(t, stderr, "give --tls-cert and --tls-key")
		inspectTLSInTmux(t, server, tlsFlags)
	})
}

// inspectTLSInTmux runs inspect over TLS in a real terminal and waits
// for the Tree view to list /private (made by the digest subtest) and the
// Servers view to show the member's mode.
func inspectTLSInTmux(t *testing.T, server string, tlsFlags []string) {
	bin := zkherdBin(t)
	s := newTmuxScreen(t, 120, 40, bin+" inspect --server "+server+" "+strings.Join(tlsFlags, " "))
	wait := func(key, want string) string {
		var screen string
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			if key != "" {
				s.keys(key)
			}
			if screen = s.screen(); strings.Contains(screen, want) {
				return screen
			}
		}
		t.Fatalf("screen never showed %q; last screen:\n%s", want, screen)
		return ""
	}
	wait("1", "private")
	screen := wait("5", "standalone")
	if !strings.Contains(screen, server) {
		t.Errorf("Servers view does not list %s:\n%s", server, screen)
	}
	s.keys("q")
}
