package exporter

import (
	"context"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/internal/syncbuf"
)

// TestHeadlessPollsAtItsOwnPace: without a poll interval, the exporter
// snapshots every DefaultPollInterval (5 s), not every second as the
// terminal does: a scraper comes every 15 s or more, and each snapshot is
// a request per lock directory on the servers. The interval exported is
// that, times the busy back-off (a power of two): a multiple of 5 s (at
// the terminal's 1 s it would be 1, 2, 4, 8 or 16 s, never one).
func TestHeadlessPollsAtItsOwnPace(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var log syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- ServeInspector(ctx, HeadlessOptions{
			Inspect:        inspect.Options{Servers: ens.Servers()},
			ConnectTimeout: 30 * time.Second, Addr: "127.0.0.1:0", Log: &log,
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeInspector: %v", err)
		}
	}()
	addrRe := regexp.MustCompile(`http://(\S+)/metrics`)
	intervalRe := regexp.MustCompile(`(?m)^zkherd_inspector_interval_seconds (\S+)$`)
	deadline := time.Now().Add(90 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		m := addrRe.FindStringSubmatch(log.String())
		if m == nil {
			continue
		}
		resp, err := http.Get("http://" + m[1] + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if v := intervalRe.FindStringSubmatch(string(body)); v != nil {
			s, err := strconv.ParseFloat(v[1], 64)
			if err != nil {
				t.Fatalf("interval %q: %v", v[1], err)
			}
			if r := math.Mod(s, DefaultPollInterval.Seconds()); s < DefaultPollInterval.Seconds() || r != 0 {
				t.Errorf("the exporter polls every %v s, want a multiple of %v", s, DefaultPollInterval)
			}
			return
		}
	}
	t.Fatalf("no scrape with zkherd_inspector_interval_seconds within 90 s; log:\n%s", log.String())
}
