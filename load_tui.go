package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
	"github.com/zkherd/zkherd/tui"
	"github.com/zkherd/zkherd/tui/loadview"
)

// runWithTUI runs the plan while the load dashboard shows it, with the
// cluster views of the same ensemble as tabs. Quitting the dashboard stops
// the run gracefully, like Ctrl-C: the report is partial.
func runWithTUI(ctx context.Context, plan *loadPlan, opts loadgen.Options, server string, inspect *tui.InspectOptions) ([]*loadgen.Result, bool, error) {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	report := ""
	if plan.out != "" {
		report = filepath.Join(plan.out, "report.html")
	}
	feed := loadview.NewFeed(plan.title, server, report, plan.runs)
	updates := make(chan loadview.Snapshot, 64)
	opts.Progress = func(p loadgen.Progress) { updates <- feed.Progress(p) }
	opts.ProgressPhases = true
	opts.Logf = func(format string, args ...any) { feed.Notice(fmt.Sprintf(format, args...)) }

	var (
		results []*loadgen.Result
		partial bool
		err     error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer close(updates)
		results, partial, err = runAll(runCtx, plan, opts, func(i int, _ scenarios.Run) {
			updates <- feed.Starting(i)
		})
		updates <- feed.Final(results, partial || runCtx.Err() != nil)
	}()
	terr := tui.RunLoad(ctx, updates, tui.LoadOptions{Inspect: inspect})
	if terr != nil {
		stopRun() // the user quit, or the terminal failed: stop gracefully
	}
	<-done
	if terr != nil && !errors.Is(terr, tui.ErrQuit) && !errors.Is(terr, context.Canceled) {
		return results, partial, fmt.Errorf("load dashboard: %w (use --no-tui)", terr)
	}
	if errors.Is(terr, tui.ErrQuit) && len(results) > 0 {
		partial = true
	}
	return results, partial, err
}

// dashboardInspect points the dashboard's cluster views at the ensemble under
// load (its AdminServers too, when zkherd started it).
func dashboardInspect(g *globalOptions, server string, ens *ensemble.Ensemble) *tui.InspectOptions {
	o := &tui.InspectOptions{ConnectString: server, SessionTimeout: g.sessionTimeout, Auth: g.auth}
	if ens != nil {
		o.AdminURLs = map[string]string{}
		for _, m := range ens.Members() {
			if m.AdminURL != "" {
				o.AdminURLs[m.ClientAddr] = m.AdminURL
			}
		}
	}
	return o
}
