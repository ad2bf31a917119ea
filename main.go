// Command zkherd shows and stresses how ZooKeeper coordination behaves: a
// recipe library, a live inspector (zkherd inspect) and a load generator that
// makes the herd effect visible (zkherd load, zkherd demo).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/exit"
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

	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "zkherd: %v\n", err)
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return exitInterrupted
	default:
		return exitUsage
	}
}

func newRootCmd() *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "zkherd",
		Short: "See and stress how ZooKeeper coordination behaves",
		Long: `zkherd shows and stresses how ZooKeeper coordination behaves.

  zkherd demo        start a local ensemble and run the herd-vs-fair scenario
  zkherd inspect     live terminal view of an ensemble: tree, locks, queues, sessions, servers
  zkherd load        run a load scenario with thousands of contending sessions
  zkherd cluster     start a local ensemble, or show the status of any ensemble

Without --server, commands that need ZooKeeper start a local ensemble
(Apache ZooKeeper from the zookeeper package) and remove it afterwards.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see %s --help)", err, c.CommandPath())
	})
	g.register(root)
	root.AddCommand(
		newDemoCmd(g),
		newInspectCmd(g),
		newLoadCmd(g),
		newReportCmd(g),
		newScenariosCmd(g),
		newClusterCmd(g),
		newVersionCmd(),
	)
	return root
}
