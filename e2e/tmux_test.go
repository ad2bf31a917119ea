package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/procstat"
)

// The one tmux driver of the end-to-end tests and benchmarks.

// tmuxScreen drives one program in a tmux session of its own.
type tmuxScreen struct {
	t      testing.TB
	tmux   string
	socket string
	pane   int // the pane's first process: its session id, shared by all it starts
}

// screens numbers the screens of this test process.
var screens atomic.Int64

// newTmuxScreen starts command in a width x height terminal; the session
// (its own tmux server, named after the test) is killed when the test ends,
// and the test waits for what ran in it to exit: a zkherd that loses its
// terminal still writes its report, and the test's temporary directories
// are removed only after it has.
func newTmuxScreen(t testing.TB, width, height int, command string) *tmuxScreen {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is needed for this test: apt-get install tmux (make test installs it)")
	}
	// A socket of its own per screen: a benchmark opens one after another
	// in one test, and a new server on the socket of one just killed could
	// fail ("server exited unexpectedly").
	s := &tmuxScreen{t: t, tmux: tmux, socket: fmt.Sprintf("zkherd-test-%d-%s-%d", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"), screens.Add(1))}
	if out, err := s.run("new-session", "-d", "-s", "main", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), command); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	out, _ := s.run("display-message", "-p", "-t", "main", "#{pane_pid}")
	s.pane, _ = strconv.Atoi(strings.TrimSpace(out))
	t.Cleanup(func() {
		s.run("kill-server")
		s.waitPaneExited(30 * time.Second)
	})
	return s
}

// waitPaneExited waits until no process of the pane's session is left,
// failing the test (and killing them) if some still run after timeout.
func (s *tmuxScreen) waitPaneExited(timeout time.Duration) {
	if s.pane <= 0 {
		return
	}
	end := time.Now().Add(timeout)
	for ; time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if len(sessionProcesses(s.pane)) == 0 {
			return
		}
	}
	left := sessionProcesses(s.pane)
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(left) > 0 {
		s.t.Errorf("%d processes of the terminal still ran %v after it closed (pids %v); killed", len(left), timeout, left)
	}
}

// sessionProcesses lists the live processes whose session id is sid,
// zombies left out.
func sessionProcesses(sid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, session, err := procstat.State(pid); err == nil && state != "Z" && session == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (s *tmuxScreen) run(args ...string) (string, error) {
	out, err := exec.Command(s.tmux, append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// keys sends tmux key names ("Enter", "Escape", "G").
func (s *tmuxScreen) keys(keys ...string) {
	s.t.Helper()
	if out, err := s.run(append([]string{"send-keys", "-t", "main"}, keys...)...); err != nil {
		s.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

// text types text literally.
func (s *tmuxScreen) text(text string) {
	s.t.Helper()
	if out, err := s.run("send-keys", "-t", "main", "-l", text); err != nil {
		s.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

func (s *tmuxScreen) screen() string {
	out, _ := s.run("capture-pane", "-p", "-t", "main")
	return out
}

// wait returns the screen once it shows every one of want, failing the
// test after timeout.
func (s *tmuxScreen) wait(timeout time.Duration, want ...string) string {
	s.t.Helper()
	var screen string
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		screen = s.screen()
		if allIn(screen, want) {
			return screen
		}
	}
	s.t.Fatalf("the screen never showed %q; last screen:\n%s", want, screen)
	return ""
}

func allIn(s string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// press types tmux key names one at a time, 150 ms apart (a key sent
// right after Escape can reach the program in the same read and be taken
// for Alt+key).
func (s *tmuxScreen) press(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		s.keys(k)
		time.Sleep(150 * time.Millisecond)
	}
}

// pid is the process id of the program in the terminal (0 if tmux cannot
// say).
func (s *tmuxScreen) pid() int {
	out, err := s.run("display-message", "-p", "-t", "main", "#{pane_pid}")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out))
	return pid
}

// close takes the terminal away, as an SSH drop does: the program gets
// SIGHUP and every later write to its terminal fails.
func (s *tmuxScreen) close() {
	s.t.Helper()
	if out, err := s.run("kill-server"); err != nil {
		s.t.Fatalf("tmux kill-server: %v\n%s", err, out)
	}
}
