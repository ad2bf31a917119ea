// Package sshtest starts a real OpenSSH server (Debian's openssh-server,
// /usr/sbin/sshd) on loopback for tests of the ssh launcher: two "hosts",
// 127.0.0.1 and 127.0.0.2, on one free port, with a host key and an
// authorized client key of the test's own, and no change to the
// system's ssh configuration.
package sshtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/syncbuf"
)

// Hosts are the two loopback addresses the server listens on.
var Hosts = []string{"127.0.0.1", "127.0.0.2"}

// Server is a running sshd.
type Server struct {
	Port int
	// Key is the authorized client key; OtherKey one it does not accept.
	Key, OtherKey string
	// KnownHosts holds the server's host key for both addresses.
	KnownHosts string
	// BinDir is first on the PATH of sessions to 127.0.0.2 (not to
	// 127.0.0.1): a zkherd put there is "installed" on that host.
	BinDir string
	// TmpDir is $TMPDIR in every session.
	TmpDir string

	log *syncbuf.Buffer
}

// Start starts sshd for the test; it stops when the test ends. As root
// it needs sshd's privilege separation directory, /run/sshd, which the
// package's service creates at boot: Start creates it (empty, 0755) when
// missing.
func Start(t testing.TB) *Server {
	t.Helper()
	sshd := "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("%s: %v (scripts/setup.sh installs openssh-server)", sshd, err)
	}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	s := &Server{
		Port:       freePort(t),
		Key:        filepath.Join(dir, "client"),
		OtherKey:   filepath.Join(dir, "other"),
		KnownHosts: filepath.Join(dir, "known_hosts"),
		BinDir:     filepath.Join(dir, "bin"),
		TmpDir:     filepath.Join(dir, "tmp"),
		log:        &syncbuf.Buffer{},
	}
	for _, d := range []string{s.BinDir, s.TmpDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hostKey := filepath.Join(dir, "host")
	for _, k := range []string{hostKey, s.Key, s.OtherKey} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub := func(k string) string {
		b, err := os.ReadFile(k + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	authorized := filepath.Join(dir, "authorized_keys")
	write(t, authorized, pub(s.Key)+"\n")
	var kh strings.Builder
	for _, h := range Hosts {
		fmt.Fprintf(&kh, "[%s]:%d %s\n", h, s.Port, pub(hostKey))
	}
	write(t, s.KnownHosts, kh.String())
	config := filepath.Join(dir, "sshd_config")
	write(t, config, fmt.Sprintf(`ListenAddress %[1]s:%[2]d
ListenAddress %[3]s:%[2]d
HostKey %[4]s
AuthorizedKeysFile %[5]s
StrictModes no
UsePAM no
PidFile none
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
LogLevel VERBOSE
SetEnv TMPDIR=%[6]s
Match LocalAddress %[3]s
  SetEnv TMPDIR=%[6]s PATH=%[7]s:/usr/local/bin:/usr/bin:/bin
`, Hosts[0], s.Port, Hosts[1], hostKey, authorized, s.TmpDir, s.BinDir))

	cmd := exec.Command(sshd, "-D", "-e", "-f", config)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("sshd's log:\n%s", s.log.String())
		}
	})
	deadline := time.Now().Add(time.Minute)
	for _, h := range Hosts {
		for {
			c, err := net.DialTimeout("tcp", net.JoinHostPort(h, strconv.Itoa(s.Port)), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("sshd exited: %v\n%s", err, s.log.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("sshd not listening on %s:%d after a minute\n%s", h, s.Port, s.log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return s
}

// Options are the ssh options (ssh -o) that log in to the server with
// key.
func (s *Server) Options(key string) []string {
	return []string{
		"Port=" + strconv.Itoa(s.Port),
		"IdentityFile=" + key,
		"IdentitiesOnly=yes",
		"UserKnownHostsFile=" + s.KnownHosts,
		"StrictHostKeyChecking=yes",
		"GlobalKnownHostsFile=/dev/null",
	}
}

func write(t testing.TB, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freePort is a loopback port nothing listens on at the moment.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
