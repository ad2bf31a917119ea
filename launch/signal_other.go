//go:build !unix

package launch

import (
	"os"
	"os/exec"
	"syscall"
)

var (
	interruptSignal = os.Kill // no interrupt to send elsewhere: stop it
	killSignal      = os.Kill
)

func childAttr() *syscall.SysProcAttr { return nil }

func signalGroup(cmd *exec.Cmd, sig os.Signal) error { return cmd.Process.Signal(sig) }
