package loadrun

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/report"
)

// TestProgressFitsTerminal: on a terminal the progress line is rewritten
// in place with "\r", which only works while it fits one row of an
// 80-column terminal; wider, every update leaves a wrapped remnant. The
// errors and violations stay on it.
func TestProgressFitsTerminal(t *testing.T) {
	tests := []struct {
		name string
		pr   loadgen.Progress
		want []string
	}{
		{"fair-lock", loadgen.Progress{Name: "fair-lock", State: "stopping", Window: 4 * time.Second,
			Duration: 4 * time.Second, Clients: 20, SessionsAlive: 20, Ops: 186, Rate: 106,
			MainPhase: metrics.Phase("acquire"), Main: metrics.Summary{P99: 1480}}, []string{"errors 0", "p99 1.48s"}},
		{"big", loadgen.Progress{Name: "fair-lock-adversary", State: "ramping up", Elapsed: 12 * time.Second,
			Clients: 10000, SessionsAlive: 9000, Ops: 12345678, Rate: 123456, Errors: 12345,
			MainPhase: metrics.Phase("notification_lag"), Main: metrics.Summary{P99: 12345},
			Violations: []string{"mutual exclusion"}}, []string{"VIOLATIONS 1", "errors 12,345", "clients 9000/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := &progressLine{w: &buf, terminal: true}
			s.progress(tt.pr)
			line := strings.TrimPrefix(buf.String(), "\r\033[K")
			if n := utf8.RuneCountInString(line); n >= report.Width {
				t.Errorf("progress line is %d columns, want fewer than %d: %q", n, report.Width, line)
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("progress line %q lacks %q", line, w)
				}
			}
		})
	}
}
