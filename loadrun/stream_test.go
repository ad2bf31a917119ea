package loadrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/scenarios"
)

// TestStreamLines: one JSON object a line, each written whole; figures
// not known yet are null, not 0.
func TestStreamLines(t *testing.T) {
	var buf bytes.Buffer
	s := NewStreamSink(&buf)
	s.progress(loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, State: "ramping up"})
	s.progress(loadgen.Progress{Name: "fair", Recipe: scenarios.FairLock, State: "running", Ops: 10, RampOps: 4,
		Totals:    figures.Totals{figures.Operations: 10, figures.Releases: 10, figures.Wakeups: 10, figures.ServerPackets: 60},
		MainPhase: metrics.Acquire, Main: metrics.Summary{Count: 10, CorrectedP99: 4.5}})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2: %q", len(lines), buf.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if v, ok := first["latency_ms"]; !ok || v != nil {
		t.Errorf("first line latency_ms = %v (present %v), want null", v, ok)
	}
	// The figures table's figures for the recipe, each null while its
	// counts are not known (the servers' packets, here, on the first line).
	for _, f := range figures.For(scenarios.FairLock.Figures()) {
		figs := first["figures"].(map[string]any)
		if v, ok := figs[f.Key]; !ok || v != nil {
			t.Errorf("first line figures.%s = %v (present %v), want null", f.Key, v, ok)
		}
	}
	figs := second["figures"].(map[string]any)
	if got := figs["wakeups_per_release"]; got != 1.0 {
		t.Errorf("figures.wakeups_per_release = %v, want 1", got)
	}
	if got := figs["server_packets_per_acquisition"]; got != 6.0 {
		t.Errorf("figures.server_packets_per_acquisition = %v, want 6", got)
	}
	if v, ok := figs["zk_requests_per_acquisition"]; !ok || v != nil {
		t.Errorf("figures.zk_requests_per_acquisition = %v (present %v), want null (no request count)", v, ok)
	}
	if got, ramp := second["operations"], second["ramp_operations"]; got != 10.0 || ramp != 4.0 {
		t.Errorf("operations = %v, ramp_operations = %v, want 10 and 4", got, ramp)
	}
	if got := second["latency_ms"].(map[string]any)["p99"]; got != 4.5 {
		t.Errorf("latency_ms.p99 = %v, want 4.5", got)
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

// TestStreamStopsAtFirstError: a failed write is kept and said, not
// dropped, and no later line is attempted.
func TestStreamStopsAtFirstError(t *testing.T) {
	w := &failingWriter{}
	s := NewStreamSink(w)
	s.progress(loadgen.Progress{Name: "a"})
	s.progress(loadgen.Progress{Name: "a"})
	if s.Err() == nil || !strings.Contains(s.Err().Error(), "disk full") || w.n != 1 {
		t.Errorf("Err = %v after %d writes, want disk full after 1", s.Err(), w.n)
	}
}
