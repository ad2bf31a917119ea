package recipes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A real process stopped with SIGSTOP (issue 21): the lock's holder, or a
// waiter, runs in a child process (this test binary, run again with
// childRoleEnv set; TestMain hands it to runChild), which the test stops
// past its session timeout and continues. Unlike a Pauser inside one
// process, SIGSTOP stops every goroutine and timer of the client at once,
// and on SIGCONT they all run together with what the kernel buffered.

// childSessionTimeout is the child's session timeout; the test's own
// sessions ask askedTimeout of a server that grants them 10 s, so that a
// loaded machine expires none of them.
const childSessionTimeout = 2 * time.Second

// The child's environment: its role ("holder" or "waiter"), the servers
// and the lock's path.
const (
	childRoleEnv    = "ZKHERD_TEST_CHILD_ROLE"
	childServersEnv = "ZKHERD_TEST_CHILD_SERVERS"
	childPathEnv    = "ZKHERD_TEST_CHILD_PATH"
)

// runChild is the child process: it opens a session asking childSessionTimeout,
// takes (or waits for) the fair lock, and says on stdout what happened,
// one line each: "lock ok TOKEN" or "lock err LOST MESSAGE"; then, for
// each line on stdin, "write" answers "write TOKEN" (the fenced write a
// holder makes), "lost" "lost true WAITED" once Lost() is closed ("lost
// false" if it stays open 10 s), and "release" "unlock LOST MESSAGE" (LOST:
// whether the error wraps ErrLost). It ends when stdin does.
func runChild(role string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := NewSession(ctx, strings.Split(os.Getenv(childServersEnv), ","), WithSessionTimeout(childSessionTimeout))
	if err != nil {
		fmt.Printf("session err %v\n", err)
		return 1
	}
	defer s.Close()
	l := NewLock(s, os.Getenv(childPathEnv))
	fmt.Printf("session %d\n", s.ID())
	if err := l.Lock(ctx); err != nil {
		fmt.Printf("lock err %v %s\n", errors.Is(err, ErrLost) || errors.Is(err, ErrSessionExpired), oneLine(err))
	} else {
		fmt.Printf("lock ok %d\n", l.FencingToken())
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "write":
			fmt.Printf("write %d\n", l.FencingToken())
		case "lost":
			start := time.Now()
			select {
			case <-l.Lost():
				fmt.Printf("lost true %v\n", time.Since(start))
			case <-time.After(10 * time.Second):
				fmt.Printf("lost false\n")
			}
		case "release":
			err := l.Unlock(ctx)
			fmt.Printf("unlock %v %s\n", errors.Is(err, ErrLost), oneLine(err))
		}
	}
	return 0
}

func oneLine(err error) string {
	if err == nil {
		return "nil"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// child is a running child process and its lines.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startChild runs this test binary as a child in role, on the lock at path.
func startChild(t *testing.T, role string, servers []string, path string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRoleEnv+"="+role, childServersEnv+"="+strings.Join(servers, ","), childPathEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		done := make(chan struct{})
		go func() {
			for range c.lines {
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		cmd.Wait()
	})
	return c
}

// line waits for the child's next line, which must start with prefix, and
// returns its fields after the prefix.
func (c *child) line(t *testing.T, prefix string, limit time.Duration) []string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatalf("the child ended before saying %q", prefix)
		}
		if !strings.HasPrefix(l, prefix+" ") {
			t.Fatalf("the child said %q, want %q...", l, prefix)
		}
		return strings.Fields(strings.TrimPrefix(l, prefix+" "))
	case <-time.After(limit):
		t.Fatalf("the child did not say %q within %v", prefix, limit)
	}
	return nil
}

func (c *child) send(t *testing.T, cmd string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, cmd+"\n"); err != nil {
		t.Fatalf("to the child: %v", err)
	}
}

// stopPastSession SIGSTOPs the child until granted reports the next
// holder's grant (which the servers make only once they expired the
// child's session), then SIGCONTs it.
func (c *child) stopPastSession(t *testing.T, granted <-chan error) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	select {
	case err := <-granted:
		if err != nil {
			t.Fatalf("the next holder: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the next holder was not granted within 30 s of the child's SIGSTOP")
	}
	t.Logf("the next holder granted %v after the child's SIGSTOP", time.Since(stopped).Round(time.Millisecond))
	if err := c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// TestSIGSTOPHolder: the holder, a separate process, is stopped past its
// session timeout while a waiter is granted, then continued. It must be
// told the truth: Lost() closes, and Unlock returns an error wrapping
// ErrLost; its fencing token is below the next holder's, so a guarded
// resource rejects its write; nothing is left behind.
func TestSIGSTOPHolder(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 2*time.Minute)
	holder := startChild(t, "holder", servers, path)
	holder.line(t, "session", 30*time.Second)
	got := holder.line(t, "lock", 30*time.Second)
	if got[0] != "ok" {
		t.Fatalf("the child's Lock: %v", got)
	}
	holderToken, _ := strconv.ParseUint(got[1], 10, 64)

	s := newTestSession(t, servers, WithSessionTimeout(askedTimeout))
	waiter := NewLock(s, path)
	granted := make(chan error, 1)
	go func() { granted <- waiter.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the waiter's node", func() bool { return len(children(t, s, path)) == 2 })

	holder.stopPastSession(t, granted)
	// The guarded resource remembers the highest token it accepted: the
	// next holder's, written as soon as it was granted.
	fence := waiter.FencingToken()
	holder.send(t, "write")
	w := holder.line(t, "write", 30*time.Second)
	if tok, _ := strconv.ParseUint(w[0], 10, 64); tok != holderToken || tok >= fence {
		t.Errorf("the stopped holder writes with token %d (granted %d), the next holder's is %d: want it below, so that the resource rejects it", tok, holderToken, fence)
	}
	// Lost() closes as soon as the continued process's timers run (the
	// server silent past the session): not at the very instant of SIGCONT,
	// which is why the resource must fence.
	holder.send(t, "lost")
	if l := holder.line(t, "lost", 30*time.Second); l[0] != "true" {
		t.Errorf("the stopped holder's Lost() still open 10 s after SIGCONT, though the next holder was granted")
	} else {
		t.Logf("the stopped holder's Lost() closed %s after it asked", l[1])
	}
	holder.send(t, "release")
	u := holder.line(t, "unlock", 30*time.Second)
	if u[0] != "true" {
		t.Errorf("the stopped holder's Unlock: %s, want an error wrapping ErrLost", strings.Join(u[1:], " "))
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Errorf("the next holder's Unlock: %v", err)
	}
	if n := len(children(t, s, path)); n != 0 {
		t.Errorf("%d nodes left under %s", n, path)
	}
}

// TestSIGSTOPWaiter: a waiter in a separate process is stopped while it
// waits; its predecessor is released during the stop (the notification
// reaches its socket before the servers expire its session), and the next
// waiter is granted once its session expired. Continued, it must not
// return from Lock with a grant: it read the release only after the
// session had gone (on SIGCONT, go-zookeeper's overdue ping is written
// before the buffered notification is read, which made the server look
// heard from just now).
func TestSIGSTOPWaiter(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	ctx := testCtx(t, 2*time.Minute)
	s := newTestSession(t, servers, WithSessionTimeout(askedTimeout))
	holder := NewLock(s, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := startChild(t, "waiter", servers, path)
	stopped.line(t, "session", 30*time.Second)
	waitFor(t, 10*time.Second, "the child's node", func() bool { return len(children(t, s, path)) == 2 })
	nextS := newTestSession(t, servers, WithSessionTimeout(askedTimeout))
	next := NewLock(nextS, path)
	granted := make(chan error, 1)
	go func() { granted <- next.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the next waiter's node", func() bool { return len(children(t, s, path)) == 3 })

	if err := stopped.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	stopped.stopPastSession(t, granted)
	got := stopped.line(t, "lock", 30*time.Second)
	t.Logf("the stopped waiter's Lock: %v", got)
	if got[0] != "err" || got[1] != "true" {
		t.Errorf("the stopped waiter's Lock: %s, want an error wrapping ErrLost or ErrSessionExpired (its session expired, the next waiter holds)", strings.Join(got, " "))
	}
	if err := next.Unlock(ctx); err != nil {
		t.Errorf("the next waiter's Unlock: %v", err)
	}
	if n := len(children(t, s, path)); n != 0 {
		t.Errorf("%d nodes left under %s", n, path)
	}
}
