//go:build unix && !linux

package ensemble

import (
	"syscall"
	"time"
)

// sysProcAttr puts the JVM in its own process group, so a Ctrl-C meant for
// the Go program does not reach it before Stop does. Outside Linux there is
// no parent-death signal: a Go program killed without running Stop leaves
// its servers running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitStopped cannot observe thread states portably; SIGSTOP takes effect
// within microseconds anyway.
func waitStopped(pid int, timeout time.Duration) bool { return true }
