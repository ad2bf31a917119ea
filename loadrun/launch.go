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
	// Command is the command line (after the binary) that joins a run:
	// the command's flags, which package main owns. A launched process's
	// repeats the settings it shares with this one (session timeout, TLS).
	Command func(j JoinCommand) []string
	// Env is the environment to add (credentials: never in Args).
	Env map[string]string
}

// JoinCommand is what a process needs to join distributed run ID.
type JoinCommand struct {
	ID, Server string
	// Coord is the coordinating ensemble's connect string, "" when the
	// servers under test coordinate.
	Coord string
	// Launched is set for a process this one starts (Timeout is how
	// long it waits for the run to exist; it draws no dashboard); unset,
	// the line is for a user to run by hand.
	Launched bool
	Timeout  time.Duration
}

// join is the JoinCommand of run id for d.
func (d Distributed) join(id, server string, launched bool) JoinCommand {
	j := JoinCommand{ID: id, Server: server, Launched: launched, Timeout: d.JoinTimeout}
	if len(d.Coord.Servers) > 0 {
		j.Coord = d.Coord.String()
	}
	return j
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
	args := r.joinArgs(d.join(id, server, true))
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

// joinArgs is Joiners.Command's line for j; a Runner not given one (a
// test's) has the run's id and servers only.
func (r *Runner) joinArgs(j JoinCommand) []string {
	if r.Joiners.Command == nil {
		return []string{"(join run", j.ID, "on", j.Server + ")"}
	}
	return r.Joiners.Command(j)
}

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
			fmt.Fprintln(r.Stderr, exit.Advice(r.Target.Name, "run %s is not started yet; waiting up to %v ({join-timeout}) for process 0 to start it", id, d.JoinTimeout))
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
