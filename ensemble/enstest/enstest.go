// Package enstest starts a real local ZooKeeper ensemble for a test and
// stops it when the test ends.
package enstest

import (
	"context"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble"
)

// startTimeout bounds the start-up of an ensemble of nodes members (and
// each restart of one): a 3-node ensemble needs 3-5 s on an idle 2-core
// machine, but many times that when other tests load it, and its members'
// JVMs share the cores: at load average 50-75 one of 5 members' JVMs took
// 82 s to start its AdminServer, and 90 s for all 5 was not enough. A
// member that exits or cannot bind its port fails at once (waitServing);
// only one that runs but never serves waits the whole bound.
func startTimeout(nodes int) time.Duration {
	return 60*time.Second + time.Duration(max(nodes, 1))*30*time.Second
}

// Start starts an ensemble of nodes (1, 3, 5 or 7) members with fsync off and
// QuickStart on, in a t.TempDir, and stops it in t.Cleanup. When ZooKeeper
// or Java is missing, or the servers fail to start, it fails the test with
// the cause and fix. If the test failed, the end of each member's log is
// logged at cleanup.
func Start(t testing.TB, nodes int) *ensemble.Ensemble {
	t.Helper()
	return StartWith(t, ensemble.Options{Nodes: nodes})
}

// StartConfig is Start with the server configuration cfg.
func StartConfig(t testing.TB, nodes int, cfg ensemble.ServerConfig) *ensemble.Ensemble {
	t.Helper()
	return StartWith(t, ensemble.Options{Nodes: nodes, ServerConfig: cfg})
}

// StartTLS is Start for an ensemble that accepts clients only over TLS
// (ensemble.Options.TLS): ens.TLS() names its CA and client certificate.
func StartTLS(t testing.TB, nodes int) *ensemble.Ensemble {
	t.Helper()
	return StartWith(t, ensemble.Options{Nodes: nodes, TLS: true})
}

// StartWith is Start with opts (Nodes, PeerAddr...): fsync, Dir, HeapMB,
// QuickStart and Logf are set as Start sets them.
func StartWith(t testing.TB, opts ensemble.Options) *ensemble.Ensemble {
	t.Helper()
	bound := startTimeout(opts.Nodes)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	opts.NoFsync, opts.Dir, opts.HeapMB, opts.QuickStart, opts.Logf = true, t.TempDir(), 96, true, t.Logf
	if opts.StartTimeout == 0 {
		opts.StartTimeout = bound
	}
	ens, err := ensemble.Start(ctx, opts)
	if err != nil {
		t.Fatalf("enstest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range ens.Members() {
				t.Logf("enstest: member %d (%v), last lines of %s:\n%s", m.ID, m.State, m.LogFile, LogTail(m.LogFile, 20))
			}
		}
		if err := ens.Stop(); err != nil {
			t.Errorf("enstest: %v", err)
		}
	})
	return ens
}
