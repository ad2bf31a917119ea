package tui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/tui/loadview"
)

// LoadDashboard is the load dashboard as a load run's display: it shows
// the runs live, with the cluster views of the same ensemble as tabs
// (polled by a read-only session of their own with inspect's settings;
// its ConnectString is the run's server). Quitting the dashboard stops
// the runs gracefully, like Ctrl-C: the report is partial.
func LoadDashboard(inspect InspectOptions) loadrun.Display {
	return func(ctx context.Context, plan *loadrun.Plan, where loadrun.Where, exec func(context.Context, loadrun.Sink) loadrun.Outcome) loadrun.Outcome {
		// What connects gets the connect string and the TLS settings; the
		// label (which may carry the ensemble's configuration) is shown.
		inspect.ConnectString, inspect.TLS = where.Server.String(), where.TLS
		return dashboard(ctx, plan, where.Label, &inspect, exec)
	}
}

// dashboard runs exec while the dashboard shows it; label names the
// servers for people.
func dashboard(ctx context.Context, plan *loadrun.Plan, label string, inspect *InspectOptions, exec func(context.Context, loadrun.Sink) loadrun.Outcome) loadrun.Outcome {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	report := ""
	if plan.Out != "" {
		report = filepath.Join(plan.Out, "report.html")
	}
	feed := loadview.NewFeed(plan.Title, label, report, plan.Runs)
	updates := make(chan loadview.Snapshot, 64)
	var (
		out  loadrun.Outcome
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer close(updates)
		out = exec(runCtx, loadview.Sink{Feed: feed, Updates: updates})
		updates <- feed.Final(out.Results, out.Partial || runCtx.Err() != nil)
	}()
	terr := RunLoad(ctx, updates, LoadOptions{Inspect: inspect})
	if terr != nil {
		stopRun() // the user quit, or the terminal failed: stop gracefully
	}
	<-done
	// A terminal that went away (SIGHUP ended ctx) fails the screen's
	// writes too: that is the hang-up, not a dashboard failure.
	if terr != nil && !errors.Is(terr, ErrQuit) && !errors.Is(terr, context.Canceled) && ctx.Err() == nil && out.Err == nil {
		out.Err = fmt.Errorf("%w: %w", loadrun.ErrDisplay, terr)
	}
	if errors.Is(terr, ErrQuit) && len(out.Results) > 0 {
		out.Partial = true
	}
	return out
}
