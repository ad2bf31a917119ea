package loadrun

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/loadgen"
)

// Cleanup removes, on the target's servers, the namespaces that load runs
// whose owners are gone left under /zkherd/runs (a run killed, or cut off
// from its servers), and says what it removed on w: `zkherd load
// --cleanup`. Every run does the same before it starts.
func Cleanup(ctx context.Context, t Target, w io.Writer) error {
	if len(t.Server.Servers) == 0 {
		return exit.Inputf("{cleanup} removes what dead runs left on servers you name: give them with {server}")
	}
	e := &Env{Server: t.Server, t: t}
	s, err := e.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	removed, err := loadgen.RemoveDeadRuns(cctx, s.Conn(), t.Server.Chroot)
	where := t.Server.Chroot + loadgen.Root
	switch {
	case len(removed) > 0:
		fmt.Fprintf(w, "removed %d namespace(s) under %s left by runs whose owners are gone: %s\n", len(removed), where, strings.Join(removed, ", "))
	case err == nil:
		fmt.Fprintf(w, "no namespace under %s was left by a run whose owner is gone\n", where)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return exit.Usagef("could not remove every namespace left by dead runs: %v", reason(err))
	}
	return nil
}
