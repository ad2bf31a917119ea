package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Endpoint is an HTTP server answering Prometheus scrapes on /metrics.
type Endpoint struct {
	ln  net.Listener
	srv *http.Server
	err chan error // the server's end, once

	closeOnce sync.Once
	closeErr  error
}

// Listen starts serving reg on addr ("127.0.0.1:9464", ":9464"). It
// listens before it returns, so that a port in use is the caller's error
// at once, not a line in a log after the run began.
func Listen(addr string, reg *prometheus.Registry) (*Endpoint, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return nil, fmt.Errorf("exporter: cannot serve metrics on %s: %w (choose another HOST:PORT)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// OpenMetrics and protobuf when the scraper asks (native
		// histograms travel only in protobuf); text otherwise.
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "zkherd: metrics at /metrics")
	})
	e := &Endpoint{ln: ln, err: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { e.err <- e.srv.Serve(ln) }()
	return e, nil
}

// Addr is the address the endpoint listens on (the port chosen, for ":0").
func (e *Endpoint) Addr() string { return e.ln.Addr().String() }

// Close stops the endpoint after linger (so that a scraper's last visit
// sees the final values), or at once when ctx ends first. Scrapes under
// way get a second to finish. Later calls return the first's result.
func (e *Endpoint) Close(ctx context.Context, linger time.Duration) error {
	e.closeOnce.Do(func() { e.closeErr = e.close(ctx, linger) })
	return e.closeErr
}

func (e *Endpoint) close(ctx context.Context, linger time.Duration) error {
	if linger > 0 {
		t := time.NewTimer(linger)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	err := e.srv.Shutdown(sctx)
	if serr := <-e.err; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("exporter: %w", err)
	}
	return nil
}
