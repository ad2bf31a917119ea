package launch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/internal/pkgerr"
)

// SSH starts one joining process on each of its hosts over ssh (the
// OpenSSH client on PATH, with the user's ssh configuration): zkherd
// from the host's PATH when it is this very binary, else this binary
// copied into a temporary directory there, removed when it exits.
//
// How a remote process stops (ssh without a terminal sends no signal
// when the connection closes): a small POSIX sh script on the host runs
// zkherd in the background and reads its standard input, which is the
// ssh connection's: each line the starter writes, and the end of input
// (the starter closing it, dying, or the connection lost), sends zkherd
// SIGTERM, which it treats as Ctrl-C; a second one ends it at once. Once
// zkherd has exited the script removes the copied binary and ends its
// own process group (the reader), so nothing of the run stays on the
// host. Assumptions: the host has a POSIX sh, uname, mktemp and cat.
type SSH struct {
	// Hosts are the hosts, [user@]host as ssh takes them.
	Hosts []string
	// Executable is this zkherd binary: copied to hosts without it.
	Executable string
	// Options are ssh options (ssh -o), such as Port=2222.
	Options []string
	// Output receives the processes' output, each line prefixed
	// "[host]".
	Output io.Writer
	// Version is this binary's version (zkherd version), compared with
	// a host's zkherd when this binary cannot run there.
	Version string

	// platform is this binary's GOOS/GOARCH; empty: runtime's.
	platform string

	mu     sync.Mutex
	remote map[string]remoteBinary // per host, found by Check
}

// remoteBinary is what Check found on a host: the zkherd to run there,
// or that this binary must be copied.
type remoteBinary struct {
	path string // on the host's PATH and usable; empty: copy
}

// Processes is one per host.
func (s *SSH) Processes() int { return len(s.Hosts) }

// RemoteGrace is how long a remote process may take to stop once its
// ssh connection has ended before it is killed.
const RemoteGrace = 15 * time.Second

// probeTimeout bounds Check on each host, connection included.
const probeTimeout = 30 * time.Second

// probeScript prints the host's system and machine, then, when it has
// zkherd on its PATH, its path, its sha256 and its version.
const probeScript = `uname -s; uname -m
p=$(command -v zkherd 2>/dev/null) || exit 0
echo "$p"
sha256sum "$p" 2>/dev/null | cut -d' ' -f1 || echo -
"$p" version 2>/dev/null | head -n 1`

// Check connects to every host (in parallel) and finds the zkherd to run
// there; the first failure is one line naming the host and the fix.
func (s *SSH) Check(ctx context.Context) error {
	sum, err := fileSHA256(s.Executable)
	if err != nil {
		return pkgerr.Wrap("launch", fmt.Errorf("%s cannot be read to copy it to the hosts: %w", s.Executable, err))
	}
	errs := make([]error, len(s.Hosts))
	found := make([]remoteBinary, len(s.Hosts))
	var wg sync.WaitGroup
	for i, h := range s.Hosts {
		wg.Go(func() {
			found[i], errs[i] = s.check(ctx, h, sum)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return pkgerr.Wrap("launch", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remote = map[string]remoteBinary{}
	for i, h := range s.Hosts {
		s.remote[h] = found[i]
	}
	return nil
}

// check probes host: which zkherd runs there.
func (s *SSH) check(ctx context.Context, host, sum string) (remoteBinary, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := s.output(ctx, host, nil, "sh -c "+shQuote(probeScript))
	if err != nil {
		return remoteBinary{}, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 2 {
		return remoteBinary{}, fmt.Errorf("host %s: unexpected answer to uname (%q); it needs a POSIX sh, uname and mktemp", host, inert.String(string(out)))
	}
	platform := goPlatform(lines[0], lines[1])
	var path, theirSum, version string
	if len(lines) >= 5 {
		path, theirSum, version = lines[2], lines[3], strings.TrimPrefix(lines[4], "zkherd ")
	}
	local := s.platform
	if local == "" {
		local = runtime.GOOS + "/" + runtime.GOARCH
	}
	switch {
	case path != "" && theirSum == sum:
		return remoteBinary{path: path}, nil // this very binary
	case platform == local:
		return remoteBinary{}, nil // copy this one
	case path != "" && version == s.Version:
		return remoteBinary{path: path}, nil // the same version, built for it
	case path != "":
		return remoteBinary{}, fmt.Errorf("host %s is %s and its zkherd (%s) is version %s, not %s: install zkherd %s there (this binary is %s)",
			host, platform, inert.String(path), inert.String(version), s.Version, s.Version, local)
	}
	return remoteBinary{}, fmt.Errorf("host %s is %s and has no zkherd on its PATH, and this binary is %s: install zkherd %s there", host, platform, local, s.Version)
}

// Start copies this binary to the hosts that need it and starts one
// process on each.
func (s *SSH) Start(ctx context.Context, j Join) (*Group, error) {
	s.mu.Lock()
	remote := s.remote
	s.mu.Unlock()
	if remote == nil {
		return nil, pkgerr.Wrap("launch", errors.New("the hosts were not checked (Check before Start)"))
	}
	for k := range j.Env {
		if !envName(k) {
			return nil, pkgerr.Wrap("launch", fmt.Errorf("%q cannot be sent as an environment variable", k))
		}
	}
	w := newLineWriter(s.Output)
	var procs []*proc
	var copied []struct{ host, dir string }
	fail := func(err error) (*Group, error) {
		for _, c := range copied {
			_, _ = s.output(context.WithoutCancel(ctx), c.host, nil, "rm -rf "+shQuote(c.dir))
		}
		return nil, pkgerr.Wrap("launch", err)
	}
	for _, h := range s.Hosts {
		bin, dir := remote[h].path, ""
		if bin == "" {
			var err error
			if dir, err = s.copyTo(ctx, h); err != nil {
				return fail(err)
			}
			copied = append(copied, struct{ host, dir string }{h, dir})
			bin = dir + "/zkherd"
			w.line(h, "copied this zkherd to "+bin)
		} else {
			w.line(h, "running "+bin+" (on the host's PATH)")
		}
		procs = append(procs, s.joinProc(h, bin, dir, j, w))
	}
	g, err := newGroup(ctx, w, procs)
	if err != nil {
		return fail(err)
	}
	return g, nil
}

// copyTo copies this binary into a new temporary directory on host and
// says which.
func (s *SSH) copyTo(ctx context.Context, host string) (string, error) {
	f, err := os.Open(s.Executable)
	if err != nil {
		return "", fmt.Errorf("%s cannot be read to copy it to %s: %w", s.Executable, host, err)
	}
	defer f.Close()
	script := `d=$(mktemp -d "${TMPDIR:-/tmp}/zkherd.XXXXXX") && cat > "$d/zkherd" && chmod 700 "$d/zkherd" && echo "$d"`
	out, err := s.output(ctx, host, f, "sh -c "+shQuote(script))
	if err != nil {
		return "", err
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" || strings.ContainsAny(dir, "\n'") {
		return "", fmt.Errorf("host %s: copying zkherd gave no directory (%q); check its temporary directory ($TMPDIR or /tmp) is writable", host, inert.String(dir))
	}
	return dir, nil
}

// runScript runs zkherd ("$@") on the host and stops it as SSH says; the
// environment comes first on standard input, a line per name.
const runScript = `exec 3<&0
%s"$@" </dev/null 3<&- &
pid=$!
( while IFS= read -r _ <&3; do kill -TERM "$pid"; done
  kill -TERM "$pid"
  sleep %d </dev/null & s=$!
  trap 'kill "$s"; exit 0' TERM
  wait "$s"; kill -KILL "$pid" ) </dev/null >/dev/null 2>&1 &
w=$!
exec >/dev/null 2>&1
wait "$pid"; st=$?
kill "$w" 2>/dev/null
%sexit "$st"`

// joinProc is the ssh command running j on host with bin; dir, when not
// empty, is removed once it ends.
func (s *SSH) joinProc(host, bin, dir string, j Join, w *lineWriter) *proc {
	var env strings.Builder
	var stdin bytes.Buffer
	for _, k := range sortedKeys(j.Env) {
		fmt.Fprintf(&env, "IFS= read -r %s <&3 || exit 97; export %s\n", k, k)
		stdin.WriteString(strings.ReplaceAll(j.Env[k], "\n", " ") + "\n")
	}
	cleanup := ""
	if dir != "" {
		cleanup = "rm -rf " + shQuote(dir) + "\n"
	}
	script := fmt.Sprintf(runScript, env.String(), int(RemoteGrace/time.Second), cleanup)
	remote := []string{"sh", "-c", shQuote(script), "zkherd-join", shQuote(bin)}
	for _, a := range j.Args {
		remote = append(remote, shQuote(a))
	}
	cmd := exec.Command("ssh", s.sshArgs(host, strings.Join(remote, " "))...)
	cmd.Stdout, cmd.Stderr = w.stream(host, "stdout"), w.stream(host, "stderr")
	cmd.SysProcAttr = childAttr() // ssh dies with the starter: the host sees the end of input
	cmd.WaitDelay = waitDelay
	p := &proc{name: host, cmd: cmd}
	// ssh's standard input is a pipe this process holds until ssh has
	// exited; the environment waits in it (a few bytes, below any pipe's
	// capacity), then each interrupt is a line.
	p.setup = func() error {
		r, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		if _, err := pw.Write(stdin.Bytes()); err != nil {
			r.Close()
			pw.Close()
			return err
		}
		cmd.Stdin = r
		var once sync.Once
		p.interrupt = func() error {
			var err error
			once.Do(func() { _, err = pw.Write([]byte("\n")) })
			return err
		}
		p.kill = func() error {
			_ = pw.Close() // the end of input: the host stops it too
			return signalGroup(cmd, killSignal)
		}
		p.started = func() { r.Close() }
		p.done = func() { pw.Close() }
		return nil
	}
	return p
}

// output runs command on host over ssh with stdin and returns its
// standard output; a failure is one line naming the host and the fix.
func (s *SSH) output(ctx context.Context, host string, stdin io.Reader, command string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ssh", s.sshArgs(host, command)...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("host %s: no answer over ssh within %v; check it is up and reachable", host, probeTimeout)
		}
		return nil, ctx.Err()
	}
	return nil, sshError(host, err, stderr.String())
}

// sshArgs are ssh's arguments to run command on host: no prompts (a
// launcher has no one to answer them), a bounded connection time, the
// user's options.
func (s *SSH) sshArgs(host, command string) []string {
	var args []string
	for _, o := range s.Options { // ssh keeps the first value given: the user's
		args = append(args, "-o", o)
	}
	args = append(args, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=15", "-T")
	return append(args, "--", host, command)
}

// sshError is ssh's failure as one line: the host, what went wrong, and
// what to do.
func sshError(host string, err error, stderr string) error {
	last := ""
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Warning: Permanently added") {
			last = l
		}
	}
	var ee *exec.ExitError
	code := -1
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if errors.Is(err, exec.ErrNotFound) {
		return exit.Input("ssh is not installed here ({hosts} runs the OpenSSH client): install openssh-client")
	}
	low := strings.ToLower(stderr)
	switch {
	case code != 255 && code != -1:
		if last == "" {
			last = fmt.Sprintf("exit status %d", code)
		}
		return fmt.Errorf("host %s: the command failed: %s; it needs a POSIX sh, uname, mktemp and a writable $TMPDIR or /tmp", host, inert.String(last))
	case strings.Contains(low, "connection refused"):
		return exit.Input("host %s: ssh connection refused; check sshd runs there and its port ({ssh-option} Port=N)", host)
	case strings.Contains(low, "timed out") || strings.Contains(low, "no route to host") || strings.Contains(low, "network is unreachable"):
		return fmt.Errorf("host %s: unreachable over ssh (%s); check the name and the network", host, inert.String(last))
	case strings.Contains(low, "could not resolve hostname"):
		return exit.Input("host %s: unknown host name; check {hosts}", host)
	case strings.Contains(low, "permission denied"):
		return exit.Input("host %s: ssh login refused (%s); set up key login for this user there (ssh-copy-id %s) or name the key: {ssh-option} IdentityFile=PATH", host, inert.String(last), host)
	case strings.Contains(low, "host key verification failed") || strings.Contains(low, "host key for") || strings.Contains(low, "no host key is known"):
		return fmt.Errorf("host %s: its ssh host key is unknown or changed; connect once with ssh %s to check and accept it", host, host)
	case last == "":
		last = err.Error()
	}
	return fmt.Errorf("host %s: ssh failed: %s", host, inert.String(last))
}

// goPlatform is uname's system and machine as GOOS/GOARCH.
func goPlatform(system, machine string) string {
	goos := strings.ToLower(strings.TrimSpace(system))
	arch := strings.TrimSpace(machine)
	switch arch {
	case "x86_64", "amd64":
		arch = "amd64"
	case "aarch64", "arm64":
		arch = "arm64"
	case "i386", "i686":
		arch = "386"
	case "armv7l", "armv6l":
		arch = "arm"
	}
	return goos + "/" + arch
}

// shQuote quotes s as one word for a POSIX shell.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// envName says whether k is a portable environment variable name.
func envName(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
