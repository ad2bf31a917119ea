package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/scenarios"
	"github.com/zkherd/zkherd/tui"
	"github.com/zkherd/zkherd/tui/loadview"
)

// dashboardFor is the load dashboard as the runs' display, with the
// cluster views of the same ensemble as tabs (polled by a read-only
// session of their own, with g's credentials).
func dashboardFor(g *globalOptions) loadrun.Display {
	return func(ctx context.Context, plan *loadrun.Plan, server string, exec func(context.Context, loadrun.Sink) loadrun.Outcome) loadrun.Outcome {
		inspect := &tui.InspectOptions{ConnectString: server, SessionTimeout: g.sessionTimeout, Auth: g.auth}
		return dashboard(ctx, plan, server, inspect, exec)
	}
}

// dashboard runs exec while the dashboard shows it. Quitting the dashboard
// stops the runs gracefully, like Ctrl-C: the report is partial.
func dashboard(ctx context.Context, plan *loadrun.Plan, server string, inspect *tui.InspectOptions, exec func(context.Context, loadrun.Sink) loadrun.Outcome) loadrun.Outcome {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	report := ""
	if plan.Out != "" {
		report = filepath.Join(plan.Out, "report.html")
	}
	feed := loadview.NewFeed(plan.Title, server, report, plan.Runs)
	updates := make(chan loadview.Snapshot, 64)
	var (
		out  loadrun.Outcome
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer close(updates)
		out = exec(runCtx, feedSink{feed, updates})
		updates <- feed.Final(out.Results, out.Partial || runCtx.Err() != nil)
	}()
	terr := tui.RunLoad(ctx, updates, tui.LoadOptions{Inspect: inspect})
	if terr != nil {
		stopRun() // the user quit, or the terminal failed: stop gracefully
	}
	<-done
	if terr != nil && !errors.Is(terr, tui.ErrQuit) && !errors.Is(terr, context.Canceled) && out.Err == nil {
		out.Err = fmt.Errorf("load dashboard: %w (use --no-tui)", terr)
	}
	if errors.Is(terr, tui.ErrQuit) && len(out.Results) > 0 {
		out.Partial = true
	}
	return out
}

// feedSink sends the runs' reports to the dashboard as snapshots.
type feedSink struct {
	feed    *loadview.Feed
	updates chan<- loadview.Snapshot
}

func (s feedSink) Starting(i int, _ scenarios.Run, _ string) { s.updates <- s.feed.Starting(i) }
func (s feedSink) Progress(p loadgen.Progress)               { s.updates <- s.feed.Progress(p) }
func (s feedSink) Notice(line string)                        { s.feed.Notice(line) }

// LiveDetail asks for what the dashboard draws beyond the progress line
// (loadgen.Options.ProgressPhases).
func (feedSink) LiveDetail() bool { return true }
