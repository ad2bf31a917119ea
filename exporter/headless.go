package exporter

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkherd/zkherd/inspect"
)

// HeadlessOptions configure ServeInspector.
type HeadlessOptions struct {
	// Inspect is how the inspector reads the ensemble: the same options,
	// and so the same cost budget, as the terminal inspector's.
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
	ep, err := Listen(o.Addr, reg)
	if err != nil {
		return err
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
