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
// run ends, its series count every process's clients and operations, not
// only the starter's.
func TestDistributedMetricsScrape(t *testing.T) {
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	addr := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := fmt.Sprintf("scrape-%d", os.Getpid())
	cmd, out := startZkherd(t, ctx, bin, "load", "--scenario", "fair-lock", "--clients", "3", "--duration", "10s",
		"--spawn", "3", "--run-id", id, "--server", ens.ConnectString(), "--no-tui",
		"--metrics-addr", addr, "--metrics-linger", "0s", "--out", filepath.Join(t.TempDir(), "report"))
	clients := regexp.MustCompile(`(?m)^zkherd_clients\{[^}]*scenario="fair-lock"[^}]*\} (\d+)$`)
	ops := regexp.MustCompile(`(?m)^zkherd_operations_total\{[^}]*scenario="fair-lock"[^}]*\} (\d+)$`)
	var seen string
	// Only the starter's live view of the other processes counts 9
	// clients: its own run has 3, and the merged report is no progress.
	ok := waitFor(ctx, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c, o := clients.FindSubmatch(body), ops.FindSubmatch(body)
		if c == nil || o == nil {
			return false
		}
		n, _ := strconv.Atoi(string(c[1]))
		seen = fmt.Sprintf("clients %s, operations %s", c[1], o[1])
		return n == 9
	})
	cmd.Wait()
	if !ok {
		t.Fatalf("no scrape during the run counted the 9 clients of the 3 processes (last: %s)\n%s", seen, out)
	}
}
