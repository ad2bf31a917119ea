package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// Local starts the joining processes on this machine, each its own
// process group (a Ctrl-C on the terminal reaches the starter alone,
// which stops them in order) that dies with the starter (Linux: the
// parent-death signal; see procattr_linux.go).
type Local struct {
	// Executable is the zkherd binary to run (os.Executable for the
	// command itself).
	Executable string
	// Count is how many processes to start.
	Count int
	// Output receives their output, each line prefixed "[process N]",
	// N counting the starter as process 1.
	Output io.Writer
}

// Processes is l.Count.
func (l Local) Processes() int { return l.Count }

// Check makes sure the binary can be run.
func (l Local) Check(context.Context) error {
	st, err := os.Stat(l.Executable)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return pkgerr.Wrap("launch", fmt.Errorf("%s cannot be run to start the other processes: %w", l.Executable, errNotRunnable(err)))
	}
	return nil
}

// Start starts l.Count processes running j.
func (l Local) Start(ctx context.Context, j Join) (*Group, error) {
	w := newLineWriter(l.Output)
	env := os.Environ()
	for _, k := range sortedKeys(j.Env) {
		env = append(env, k+"="+j.Env[k])
	}
	procs := make([]*proc, l.Count)
	for i := range procs {
		cmd := exec.Command(l.Executable, j.Args...)
		cmd.Env = env
		name := fmt.Sprintf("process %d", i+2)
		cmd.Stdout, cmd.Stderr = w.stream(name, "stdout"), w.stream(name, "stderr")
		cmd.SysProcAttr = childAttr()
		cmd.WaitDelay = waitDelay
		p := &proc{name: name, cmd: cmd}
		p.interrupt = func() error { return signalGroup(cmd, interruptSignal) }
		p.kill = func() error { return signalGroup(cmd, killSignal) }
		procs[i] = p
	}
	return newGroup(ctx, w, procs)
}

func errNotRunnable(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("not an executable file")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
