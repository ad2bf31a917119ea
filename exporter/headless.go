package exporter

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zkherd/zkherd/inspect"
)

// DefaultPollInterval is the headless exporter's time between snapshots
// when Inspect.PollInterval is not set: a Prometheus scrapes every 15 s or
// more (its own default is a minute), so a snapshot every second (the
// terminal's pace, for a person watching) would send the servers five to
// fifteen times the requests a scrape can show. Each snapshot is an exists
// per lock or queue directory found and srvr per member: with 20 lock
// directories, 20 requests a second at 1 s, 4 at 5 s; every request of
// the inspector's that meets another client's at the server can delay it,
// and at 28-40 requests a second another client's setData p99 rose
// 1.4-1.6x on a quiet machine (docs/BENCHMARKS.md). Every scrape is at most
// one interval (5 s) behind the servers.
const DefaultPollInterval = 5 * time.Second

// HeadlessWalkRate is the headless exporter's walk of the tree, in cost
// units a second (inspect.Options.WalkRate; the terminal's is
// inspect.DefaultWalkRate, 20). Nobody waits at a terminal for an
// exporter's first walk, and another client's setData p99 rises with the
// count of the inspector's requests a second, not with bursts
// (docs/BENCHMARKS.md): at 20 the first walk was about 20 of its 20.5
// requests a second on the benchmark's 205,000-znode tree. What it costs:
// that first walk takes about 13 minutes instead of 3 (the directories
// that sessions own or watch show from the first polls; the others join as
// the walk finds them, and zkherd_inspector_scan_complete is 0 until it
// ends), and later walks, which average a fifth of the rate, come every
// 30-60 minutes on such a tree: a queue no session owns or watches by
// name may join that late.
const HeadlessWalkRate = 5

// HeadlessOptions configure ServeInspector.
type HeadlessOptions struct {
	// Inspect is how the inspector reads the ensemble: the same options,
	// and so the same cost budget, as the terminal inspector's, but for a
	// PollInterval of 0, which is DefaultPollInterval here, and a
	// WalkRate of 0, HeadlessWalkRate.
	Inspect inspect.Options
	// ConnectTimeout bounds the wait for the first session.
	ConnectTimeout time.Duration
	// Addr is where /metrics is served ("127.0.0.1:9465").
	Addr string
	// MaxPaths bounds the path label values per kind (DefaultMaxPaths).
	MaxPaths int
	// Log receives the one line saying where the metrics are served.
	Log io.Writer
}

// ServeInspector runs the inspector without a terminal, as a Prometheus
// exporter on o.Addr, until ctx ends (`zkherd inspect --headless`). It
// returns an error only if it could not start: nothing is served then.
func ServeInspector(ctx context.Context, o HeadlessOptions) error {
	reg := prometheus.NewRegistry()
	x, err := NewInspector(reg, o.MaxPaths)
	if err != nil {
		return fmt.Errorf("exporter: %w", err)
	}
	// Its own cost, as every long-running exporter shows it: CPU, RSS,
	// open files (process_*), the Go runtime's heap, collections and
	// GOMAXPROCS (go_*).
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("exporter: %w", err)
		}
	}
	ep, err := Listen(o.Addr, reg)
	if err != nil {
		return err
	}
	if o.Inspect.PollInterval <= 0 {
		o.Inspect.PollInterval = DefaultPollInterval
	}
	if o.Inspect.WalkRate <= 0 {
		o.Inspect.WalkRate = HeadlessWalkRate
	}
	cctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	in, err := inspect.Open(cctx, o.Inspect)
	cancel()
	if err != nil {
		_ = ep.Close(ctx, 0)
		return err
	}
	defer in.Close()
	if o.Log != nil {
		fmt.Fprintf(o.Log, "zkherd inspect: serving metrics of %d member(s) on http://%s/metrics (Ctrl-C to stop)\n", len(o.Inspect.Servers), ep.Addr())
	}
	x.Run(ctx, in)
	return ep.Close(ctx, 0)
}
