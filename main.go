// Command zkherd shows and stresses how ZooKeeper coordination behaves: a
// recipe library, a live inspector (zkherd inspect) and a load generator that
// makes the herd effect visible (zkherd load, zkherd demo).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/internal/usermsg"
	"github.com/zkherd/zkherd/recipes"
)

// Exit statuses (package exit): 0 success, 1 a run whose correctness
// checks failed, 2 a user error, 130 interrupted.
const (
	exitOK          = exit.OK
	exitCheckFailed = exit.CheckFailed
	exitUsage       = exit.Usage
	exitInterrupted = exit.Interrupted
)

// exitError carries an exit status with a message meant for the user.
type exitError = exit.Error

// usageErr is a user error: one line naming the problem and the fix.
func usageErr(format string, args ...any) error { return exit.Usagef(format, args...) }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	// A reader that went away (tee or less ended by the same Ctrl-C) must
	// not kill zkherd before it cleans up: by default the Go runtime exits
	// on SIGPIPE from a write to stdout or stderr. Once SIGPIPE is
	// notified, such a write fails with EPIPE instead (runTo keeps quiet about it);
	// this covers every command that cleans up (cluster up, load, demo).
	// Notify, not Ignore: an ignored signal stays ignored in the processes
	// zkherd starts (ZooKeeper, tmux).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return runTo(args, os.Stdout, os.Stderr)
}

// runTo runs zkherd with args; the command's output and its error line go
// to stdout and stderr.
func runTo(args []string, stdout, stderr io.Writer) int {
	// The first Ctrl-C cancels ctx: commands stop gracefully, clean up and
	// write what they have. A second Ctrl-C exits at once. kill (SIGTERM)
	// and a closed terminal (SIGHUP) count as Ctrl-C: nothing is left
	// behind (ensemble, temporary directory, znodes).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore default handling: the next signal kills the process
	}()

	g := &globalOptions{}
	root := newRootCmdWith(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, syscall.EPIPE) {
		// Output to a reader that has gone: nobody to tell.
		return exit.Code(err, ctx.Err() != nil)
	}
	command := "zkherd"
	if c, _, ferr := root.Find(args); ferr == nil {
		command = c.CommandPath()
	}
	if line, ok := usermsg.NoTerminal(err, command); ok {
		err = usageErr("%s", line)
	}
	var ee *exitError
	if errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.As(err, &ee) {
		err = &exitError{Code: exit.Interrupted, Err: errors.New(usermsg.Interrupted(command))}
	}
	if errors.Is(err, recipes.ErrNoSession) && ctx.Err() == nil {
		err = usageErr("%s", usermsg.NoSession(err, g.tlsCfg != nil)) // the last attempt's failure and its fix
	}
	// One line, without the library's package prefixes (internal names
	// that mean nothing to a user), made inert: an error may quote a
	// server's text (a four-letter word's reply, a node's name).
	fmt.Fprintf(stderr, "zkherd: %s\n", inert.String(usermsg.Clean(err.Error())))
	return exit.Code(err, ctx.Err() != nil)
}

// newRootCmdWith builds the command tree around the shared flags g.
func newRootCmdWith(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:           "zkherd",
		Short:         "See and stress how ZooKeeper coordination behaves",
		Long:          help("zkherd"),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if line, ok := usermsg.FlagValue(err); ok {
			return usageErr("%s (see %s --help)", line, c.CommandPath())
		}
		return usageErr("%v (see %s --help)", err, c.CommandPath())
	})
	g.register(root)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return g.load() }
	root.AddCommand(
		newDemoCmd(g),
		newInspectCmd(g),
		newLoadCmd(g),
		newReportCmd(g),
		newScenariosCmd(g),
		newClusterCmd(g),
		newExportCmd(g),
		newImportCmd(g),
		newVersionCmd(),
	)
	return root
}
