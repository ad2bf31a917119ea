package ensemble

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// exitWait bounds how long we wait for a signalled JVM to exit.
const exitWait = 15 * time.Second

// process is one running JVM.
type process struct {
	pid       int
	logFile   string
	logOffset int64         // where this run's output starts in logFile
	done      chan struct{} // closed by the goroutine that waits for the JVM
	err       error         // exit status; read only after done is closed
}

// startProcess starts cmd with its output appended to logFile.
//
// The JVM is started from a goroutine locked to its OS thread, which stays
// locked until the JVM exits: Linux sends Pdeathsig when the thread that
// forked the child exits, not the process, and Go may end a thread that a
// goroutine left locked. That goroutine owns the process and closes done.
func startProcess(cmd *exec.Cmd, logFile string) (*process, error) {
	out, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ensemble: open log: %w", err)
	}
	fi, err := out.Stat()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("ensemble: open log: %w", err)
	}
	fmt.Fprintf(out, "=== zkherd ensemble: %s %s\n", time.Now().Format(time.RFC3339), strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()

	p := &process{logFile: logFile, logOffset: fi.Size(), done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(p.done)
		err := cmd.Start()
		out.Close() // the child holds its own copy
		if err != nil {
			p.err = err
			started <- err
			return
		}
		p.pid = cmd.Process.Pid
		started <- nil
		p.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("ensemble: start %s: %w", cmd.Path, err)
	}
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the JVM's process group.
func (p *process) signal(sig syscall.Signal) error {
	if p.exited() {
		return nil
	}
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("ensemble: signal %v to pid %d: %w", sig, p.pid, err)
	}
	return nil
}

// kill sends SIGKILL, which also ends a stopped (paused) process, and waits
// until the JVM is gone so its ports are free again.
func (p *process) kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	return p.wait(exitWait)
}

func (p *process) wait(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return fmt.Errorf("ensemble: pid %d still running %v after signal", p.pid, d)
	}
}

// logTail returns the last lines this run wrote to its log, for error messages.
func (p *process) logTail(lines int) string {
	b, err := readFrom(p.logFile, p.logOffset)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logFile, err)
	}
	b = bytes.TrimRight(b, "\n")
	all := strings.Split(string(b), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// logContains reports whether this run's log contains s.
func (p *process) logContains(s string) bool {
	b, err := readFrom(p.logFile, p.logOffset)
	return err == nil && bytes.Contains(b, []byte(s))
}

// readFrom reads path from offset on, or only its last 1 MiB if that is less.
func readFrom(path string, offset int64) ([]byte, error) {
	const limit = 1 << 20
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	offset = max(offset, fi.Size()-limit)
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
