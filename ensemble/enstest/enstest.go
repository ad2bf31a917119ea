// Package enstest starts a real local ZooKeeper ensemble for a test and
// stops it when the test ends.
package enstest

import (
	"context"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble"
)

// startTimeout bounds ensemble start-up: a 3-node ensemble needs 3-5 s on
// an idle 2-core machine, but several times that when other tests load it.
const startTimeout = 90 * time.Second

// Start starts an ensemble of nodes (1 or 3) members with fsync off and
// QuickStart on, in a t.TempDir, and stops it in t.Cleanup. When ZooKeeper
// or Java is missing, or the servers fail to start, it fails the test with
// the cause and fix. If the test failed, the end of each member's log is
// logged at cleanup.
func Start(t testing.TB, nodes int) *ensemble.Ensemble {
	t.Helper()
	return StartConfig(t, nodes, ensemble.ServerConfig{})
}

// StartConfig is Start with the server configuration cfg.
func StartConfig(t testing.TB, nodes int, cfg ensemble.ServerConfig) *ensemble.Ensemble {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	ens, err := ensemble.Start(ctx, ensemble.Options{
		Nodes:        nodes,
		NoFsync:      true,
		Dir:          t.TempDir(),
		HeapMB:       96,
		QuickStart:   true,
		ServerConfig: cfg,
		Logf:         t.Logf,
	})
	if err != nil {
		t.Fatalf("enstest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range ens.Members() {
				t.Logf("enstest: member %d (%v), last lines of %s:\n%s", m.ID, m.State, m.LogFile, ensemble.LogTail(m.LogFile, 20))
			}
		}
		if err := ens.Stop(); err != nil {
			t.Errorf("enstest: %v", err)
		}
	})
	return ens
}
