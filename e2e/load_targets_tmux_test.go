package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestLoadDashboardTargetsInTmux: the dashboard draws, the fair lock's
// waiter chain included, whatever the run's target needs to be reached
// (issue 20): a local ensemble started with --server-config (the
// dashboard was handed the label "127.0.0.1:2181 [skip-acl]" as a
// connect string and stopped at once), and a TLS-only ensemble reached
// with the --tls-* flags (the dashboard's inspector was built without
// them). Its Servers tab reads the same ensemble.
func TestLoadDashboardTargetsInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	tests := []struct {
		name  string
		flags func(t *testing.T) string
	}{
		{"server-config", func(*testing.T) string { return "--server-config skip-acl" }},
		{"tls", func(t *testing.T) string {
			ens := enstest.StartTLS(t, 1)
			f := ens.TLS()
			return "--server " + ens.ConnectString() + " --tls-ca " + f.CA + " --tls-cert " + f.Cert + " --tls-key " + f.Key
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := bin + " load --scenario fair-lock --clients 30 --duration 40s --out " + t.TempDir() + " " + tt.flags(t) + "; sleep 60"
			term := newTmuxScreen(t, 120, 40, cmd)
			var screen, chain string
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && chain == ""; time.Sleep(time.Second) {
				screen = term.screen()
				if strings.Contains(screen, "malformed") || strings.Contains(screen, "RESULT:") {
					break
				}
				if len(fairWaiter.FindAllString(screen, -1)) >= 3 && strings.Contains(screen, "┌ HOLD  lock-") {
					chain = screen
				}
			}
			if chain == "" {
				t.Fatalf("the dashboard never showed the fair lock's chain; last screen:\n%s", screen)
			}
			term.press("4") // the Servers view, polled by the dashboard's own session
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
				screen = term.screen()
				if strings.Contains(screen, "standalone") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the Servers tab never showed the member (standalone); screen:\n%s", screen)
				}
			}
			term.press("q", "y")
		})
	}
}
