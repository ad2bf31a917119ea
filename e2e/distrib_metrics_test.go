package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestDistributedMetricsScrape scrapes the starter's metrics endpoint
// while a run spread over three processes (--spawn 3) goes: before the
// run ends, it serves every process's series, each labelled with its
// process, not only the starter's.
func TestDistributedMetricsScrape(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	addr := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := fmt.Sprintf("scrape-%d", os.Getpid())
	cmd, out := startZkherd(t, ctx, bin, "load", "--scenario", "fair-lock", "--clients", "3", "--duration", "10s",
		"--spawn", "3", "--run-id", id, "--server", ens.ConnectString(), "--no-tui",
		"--metrics-addr", addr, "--metrics-linger", "0s", "--out", filepath.Join(t.TempDir(), "report"))
	// One series per process, labelled process="host:pid" (no series of
	// the whole run under one process's label): summed over process,
	// the 9 clients of the 3 processes; the others' from the starter's
	// live view of them, while the run goes.
	clients := regexp.MustCompile(`(?m)^zkherd_clients\{process="([^"]+)",scenario="fair-lock"\} (\d+)$`)
	latency := regexp.MustCompile(`(?m)^zkherd_latency_seconds_count\{phase="acquire",process="([^"]+)",scenario="fair-lock"\} (\d+)$`)
	var seen string
	ok := waitFor(ctx, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sum, procs, timed := 0, map[string]bool{}, map[string]bool{}
		for _, m := range clients.FindAllSubmatch(body, -1) {
			n, _ := strconv.Atoi(string(m[2]))
			sum += n
			procs[string(m[1])] = true
		}
		for _, m := range latency.FindAllSubmatch(body, -1) {
			if n, _ := strconv.Atoi(string(m[2])); n > 0 {
				timed[string(m[1])] = true
			}
		}
		seen = fmt.Sprintf("clients %d over %d processes, acquire latencies from %d", sum, len(procs), len(timed))
		return sum == 9 && len(procs) == 3 && len(timed) == 3
	})
	cmd.Wait()
	if !ok {
		t.Fatalf("no scrape during the run showed the 3 processes' series, 9 clients in all, each with latencies (last: %s)\n%s", seen, out)
	}
}
