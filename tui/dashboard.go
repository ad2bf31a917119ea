package tui

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/tui/loadview"
)

// LoadDashboard shows a load run from its events (a loadrun subscription
// with loadrun.WantDetail) until they end and the user quits: the runs
// live, with the cluster views of the same ensemble as tabs (polled by a
// read-only session of their own with inspect's settings; what connects
// gets the run's connect string and TLS settings, the label is only
// shown). It draws nothing until the run's plan arrives, and returns nil
// at once if the events end before it.
//
// It only reads the run. Quitting before the run is done, or a terminal
// that fails, calls stop (which should end the run's context: the run
// stops gracefully, like Ctrl-C, and its report is partial). It returns
// the terminal's failure, nil when the user quit or ctx ended.
func LoadDashboard(ctx context.Context, events <-chan loadrun.Event, stop func(), inspect InspectOptions) error {
	var plan loadrun.EventPlan
	for ev := range events {
		if p, ok := ev.(loadrun.EventPlan); ok {
			plan = p
			break
		}
	}
	if plan.Plan == nil {
		return nil // the run ended before it started
	}
	inspect.ConnectString, inspect.TLS = plan.Where.Server.String(), plan.Where.TLS
	report := ""
	if plan.Plan.Out != "" {
		report = filepath.Join(plan.Plan.Out, "report.html")
	}
	feed := loadview.NewFeed(plan.Plan.Title, plan.Where.Label, report, plan.Plan.Runs)
	updates := make(chan loadview.Snapshot, 64)
	translated := make(chan struct{})
	go func() {
		defer close(translated)
		defer close(updates)
		for ev := range events {
			if s, ok := feed.Event(ev); ok {
				updates <- s // RunLoad reads until updates closes
			}
		}
	}()
	err := RunLoad(ctx, updates, LoadOptions{Inspect: &inspect})
	if err != nil {
		stop() // the user quit, or the terminal failed: stop gracefully
	}
	<-translated // the run ended: its events are all read
	if errors.Is(err, ErrQuit) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		// A terminal that went away (SIGHUP ended ctx) fails the
		// screen's writes too: that is the hang-up, not a failure.
		return nil
	}
	return err
}
