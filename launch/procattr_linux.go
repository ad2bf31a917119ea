package launch

import "syscall"

// childAttr puts a started process in a process group of its own (the
// terminal's Ctrl-C reaches the starter only, which stops its processes
// itself, and a signal to the group reaches whatever the process started)
// and has the kernel send it SIGTERM, which zkherd treats as Ctrl-C, when
// the starter dies, even by SIGKILL.
//
// Assumption: the parent-death signal fires when the thread that started
// the process exits, not the process; the Go runtime does not end its
// threads while the process lives unless a goroutine locked to one
// exits, and nothing here locks one. Go's fork checks the parent is still
// there after setting it, so a starter dying during the fork is covered.
// TestSpawnStarterKilled kills the starter with SIGKILL.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
