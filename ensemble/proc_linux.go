package ensemble

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// sysProcAttr puts the JVM in its own process group, so a Ctrl-C meant for
// the Go program does not reach it before Stop does, and has the kernel send
// it SIGKILL if the thread that started it dies, so a crashed or killed Go
// program leaves no server behind. startProcess keeps that thread alive.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitStopped waits until every thread of pid is stopped, so that once Pause
// returns the member really answers nothing. SIGSTOP is delivered
// asynchronously, thread by thread.
func waitStopped(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if allStopped(pid) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

func allStopped(pid int) bool {
	stats, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "stat"))
	if len(stats) == 0 {
		return false
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		// The state follows the command name, which is in parentheses and may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return false
		}
		if st := b[i+2]; st != 'T' && st != 't' {
			return false
		}
	}
	return true
}
