package exporter

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// BenchmarkLoadInterval is what --metrics-addr adds to a run per recorded
// latency: one second's interval of a phase, 1,000 values spread as an
// acquire's are, handed to the endpoint's histogram (on the recorder's
// rotating goroutine, not the workers'). ns/op is per interval; ns/value
// per value recorded.
//
//	go test -run '^$' -bench LoadInterval ./exporter/
func BenchmarkLoadInterval(b *testing.B) {
	l, err := NewLoad(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	h := hdrhistogram.New(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	for i := range 1000 {
		_ = h.RecordValue(int64(200 + i*i%50000)) // 0.2 to 50 ms
	}
	packed := hdrhistogram.NewPacked(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	packed.MergeFrom(h)
	ev := loadrun.EventInterval{Run: "fair-lock", Phase: "acquire", Values: loadrun.IntervalValues(&metrics.PhaseInterval{Raw: packed, Corrected: packed})}
	b.ResetTimer()
	for range b.N {
		l.apply(ev)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/value")
}

// BenchmarkLoadScrape is one scrape of a fair-lock run's endpoint: every
// phase's histogram (classic and native), the figures, the counters,
// encoded as Prometheus's text format asks.
//
//	go test -run '^$' -bench LoadScrape ./exporter/
func BenchmarkLoadScrape(b *testing.B) {
	reg := prometheus.NewRegistry()
	l, err := NewLoad(reg)
	if err != nil {
		b.Fatal(err)
	}
	h := hdrhistogram.New(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	for i := range 1000 {
		_ = h.RecordValue(int64(200 + i*i%50000))
	}
	packed := hdrhistogram.NewPacked(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	packed.MergeFrom(h)
	l.apply(loadrun.EventStarting{Run: scenarios.Run{Spec: scenarios.Spec{Name: "fair-lock", Recipe: scenarios.FairLock, Clients: 1000}}})
	for _, p := range metrics.Phases() {
		l.apply(loadrun.EventInterval{Run: "fair-lock", Phase: p, Values: loadrun.IntervalValues(&metrics.PhaseInterval{Raw: packed, Corrected: packed})})
	}
	l.apply(loadrun.EventProgress{Progress: loadgen.Progress{Name: "fair-lock", Recipe: scenarios.FairLock, Ops: 1000, Clients: 1000, SessionsConnected: 1000,
		Totals: figures.Totals{figures.Operations: 1000, figures.Releases: 1000, figures.Wakeups: 1000, figures.ZKRequests: 4000}}})
	handler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ResetTimer()
	for range b.N {
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
		_, _ = io.Copy(io.Discard, w.Body)
	}
}
