//go:build unix && !linux

package launch

import "syscall"

// childAttr puts a started process in a process group of its own. Other
// systems than Linux have no parent-death signal: a starter killed with
// SIGKILL leaves its processes to stop at the run's join timeout.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
