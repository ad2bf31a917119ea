//go:build unix

package launch

import (
	"os/exec"
	"syscall"
)

const (
	interruptSignal = syscall.SIGINT
	killSignal      = syscall.SIGKILL
)

// signalGroup sends sig to the process group cmd leads.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
