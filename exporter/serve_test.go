package exporter

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/loadrun"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// served starts a load endpoint for a process label, with one interval of
// acquire latencies recorded.
func served(t *testing.T, process string) *Endpoint {
	t.Helper()
	ep, l, err := ServeLoad("127.0.0.1:0", process)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close(context.Background(), 0) })
	h := hdrhistogram.NewPacked(metrics.LowestTrackable, int64(time.Minute/time.Microsecond), metrics.SignificantFigures)
	for i := range 100 {
		_ = h.RecordValue(int64(1000 + 100*i))
	}
	l.apply(loadrun.EventStarting{Run: scenarios.Run{Spec: scenarios.Spec{Name: "fair", Recipe: scenarios.FairLock, Clients: 2}}})
	l.apply(loadrun.EventInterval{Run: "fair", Phase: metrics.Acquire, Values: loadrun.IntervalValues(&metrics.PhaseInterval{Raw: h, Corrected: h})})
	return ep
}

func get(t *testing.T, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestLatencyNativeWhenAsked: a scraper asking for protobuf (Prometheus
// with native histograms on) gets a native histogram beside the classic
// buckets; one asking for text gets the classic buckets.
func TestLatencyNativeWhenAsked(t *testing.T) {
	ep := served(t, "")
	url := "http://" + ep.Addr() + "/metrics"
	resp, body := get(t, url, `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited`)
	dec := expfmt.NewDecoder(strings.NewReader(string(body)), expfmt.ResponseFormat(resp.Header))
	native := false
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if mf.GetName() == "zkherd_latency_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			native = len(h.GetPositiveSpan()) > 0 && h.GetSampleCount() == 100
			if len(h.GetBucket()) == 0 {
				t.Errorf("no classic buckets beside the native histogram")
			}
		}
	}
	if !native {
		t.Errorf("no native histogram of 100 values in the protobuf exposition")
	}
	_, text := get(t, url, "text/plain")
	if !strings.Contains(string(text), `zkherd_latency_seconds_bucket{phase="acquire",scenario="fair",le="0.005"} 41`) {
		t.Errorf("text exposition lacks the classic bucket (41 values up to 5 ms):\n%s", text)
	}
}

// TestProcessLabel: each process of a distributed run labels its series.
func TestProcessLabel(t *testing.T) {
	ep := served(t, "host-a:4242")
	_, text := get(t, "http://"+ep.Addr()+"/metrics", "text/plain")
	for _, want := range []string{`zkherd_clients{process="host-a:4242",scenario="fair"} 2`, `zkherd_latency_seconds_count{phase="acquire",process="host-a:4242",scenario="fair"} 100`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("exposition lacks %s:\n%s", want, text)
		}
	}
}

// TestEndpointLingers: Close serves for the linger time, so a last scrape
// after the run sees its final counts, and ends at once when ctx does.
func TestEndpointLingers(t *testing.T) {
	ep := served(t, "")
	closed := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { closed <- ep.Close(ctx, time.Minute) }()
	if resp, _ := get(t, "http://"+ep.Addr()+"/metrics", ""); resp.StatusCode != 200 {
		t.Fatalf("scrape while lingering: %s", resp.Status)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned before its linger (%v)", err)
	default:
	}
	cancel()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return when ctx ended")
	}
	if _, err := http.Get("http://" + ep.Addr() + "/metrics"); err == nil {
		t.Error("the endpoint still answers after Close")
	}
}

// TestProcessSeries: a distributed run's starter serves each process's
// own series, labelled with the process, never the whole run's under its
// own label (a sum over process would count the others twice).
func TestProcessSeries(t *testing.T) {
	ep, l, err := ServeLoad("127.0.0.1:0", "h:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close(context.Background(), 0) })
	l.apply(loadrun.EventStarting{Run: scenarios.Run{Spec: scenarios.Spec{Name: "fair", Recipe: scenarios.FairLock, Clients: 2}}})
	l.apply(loadrun.EventProgress{Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, Clients: 4, Ops: 12,
		PerProcess: []loadgen.ProcessProgress{
			{Label: "h:1", Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, Clients: 2, Ops: 5}},
			{Label: "h:2", Progress: loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, Clients: 2, Ops: 7}},
		}}})
	l.apply(loadrun.EventInterval{Run: "fair", Phase: metrics.Acquire, Process: "h:2", Values: []loadrun.ValueCount{{Micros: 1000, Count: 3}}})
	l.apply(loadrun.EventInterval{Run: "fair", Phase: metrics.Acquire, Values: []loadrun.ValueCount{{Micros: 2000, Count: 1}}})
	_, text := get(t, "http://"+ep.Addr()+"/metrics", "text/plain")
	for _, want := range []string{
		`zkherd_clients{process="h:1",scenario="fair"} 2`,
		`zkherd_clients{process="h:2",scenario="fair"} 2`,
		`zkherd_operations_total{process="h:1",scenario="fair"} 5`,
		`zkherd_operations_total{process="h:2",scenario="fair"} 7`,
		`zkherd_latency_seconds_count{phase="acquire",process="h:1",scenario="fair"} 1`,
		`zkherd_latency_seconds_count{phase="acquire",process="h:2",scenario="fair"} 3`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("exposition lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(string(text), `zkherd_operations_total{process="h:1",scenario="fair"} 12`) {
		t.Errorf("the whole run's operations are served under one process's label:\n%s", text)
	}
}
