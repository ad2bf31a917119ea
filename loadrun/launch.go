package loadrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zkherd/zkherd/distrib"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/launch"
	"github.com/zkherd/zkherd/recipes"
)

// Joiners is how the processes a starter launches (--spawn, --hosts)
// reach the servers the way the starter does: the command fills it from
// its shared flags.
type Joiners struct {
	// Executable is the zkherd binary to start (os.Executable).
	Executable string
	// Args are the shared flags to repeat (--session-timeout, --tls-*).
	Args []string
	// Env is the environment to add (credentials: never in Args).
	Env map[string]string
}

// launcher is the Launcher q asks for, nil when the other processes are
// started by hand.
func (q *Request) launcher(r *Runner) launch.Launcher {
	switch {
	case q.SpawnGiven:
		return launch.Local{Executable: r.Joiners.Executable, Count: q.Spawn - 1, Output: r.Stderr}
	case q.HostsGiven:
		return &launch.SSH{Hosts: q.Hosts, Executable: r.Joiners.Executable, Options: q.SSHOptions, Output: r.Stderr, Version: r.Version}
	}
	return nil
}

// launched starts the other processes of the run id with l once it
// exists on server; close ends them: it lets them finish on their own
// for a while when the run completed, and stops them at once otherwise.
func (r *Runner) launched(ctx context.Context, l launch.Launcher, id, server string, d Distributed) (g *launch.Group, close func(completed bool), err error) {
	args := append([]string{"load", "--join", id, "--server", server, "--join-timeout", d.JoinTimeout.String(), "--no-tui"}, r.Joiners.Args...)
	if len(d.Coord.Servers) > 0 {
		args = append(args, "--coord-server", d.Coord.String())
	}
	what := "the other process"
	if n := l.Processes(); n != 1 {
		what = fmt.Sprintf("the other %d processes", n)
	}
	fmt.Fprintf(r.Stderr, "starting %s: zkherd %s\n", what, joinCommand(args))
	g, err = l.Start(ctx, launch.Join{Args: args, Env: r.Joiners.Env})
	if err != nil {
		return nil, nil, launchError(err)
	}
	return g, func(completed bool) {
		wait := time.Duration(0)
		if completed {
			wait = joinersFinish
		}
		_ = g.Close(wait, launch.DefaultGrace) // each failure was printed as it happened
	}, nil
}

// joinersFinish is how long the starter of a completed run waits for its
// launched processes to print their summaries and exit: they have
// published their parts already.
const joinersFinish = 30 * time.Second

// joinCommand is args as the line printed, ready to copy.
func joinCommand(args []string) string { return strings.Join(args, " ") }

// launchError is a launcher's failure as the user's one line.
func launchError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return exit.AsUsage(reason(err))
}

// join joins the run id; with d.WaitForRun, a run not started yet is
// waited for, up to d.JoinTimeout.
func (r *Runner) join(ctx context.Context, s *recipes.Session, chroot string, id string, d Distributed) (*distrib.Member, error) {
	deadline := time.Now().Add(d.JoinTimeout)
	said := false
	for {
		m, err := distrib.Join(ctx, s, chroot, id)
		if err == nil || !d.WaitForRun || !errors.Is(err, distrib.ErrNoRun) || time.Now().After(deadline) {
			return m, err
		}
		if !said {
			fmt.Fprintf(r.Stderr, "run %s is not started yet; waiting up to %v (--join-timeout) for process 0 to start it\n", id, d.JoinTimeout)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(runPoll):
		}
	}
}

// runPoll is how often a joining process looks for a run not started yet.
const runPoll = 500 * time.Millisecond
