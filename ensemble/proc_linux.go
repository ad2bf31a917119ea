package ensemble

import "syscall"

// sysProcAttr puts the JVM in its own process group, so a Ctrl-C meant for
// the Go program does not reach it before Stop does, and has the kernel send
// it SIGKILL if the thread that started it dies, so a crashed or killed Go
// program leaves no server behind. startProcess keeps that thread alive.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
