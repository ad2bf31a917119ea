package recipes

// Test helpers shared by every recipe's tests (and, through the exported
// SharedTestServers, the Examples in package recipes_test).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/faultproxy"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childRoleEnv); role != "" {
		os.Exit(runChild(role)) // a child process of sigstop_test.go
	}
	code := m.Run()
	stopShared()
	stopConfigured()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// The shared single-node ensemble: started on first use, stopped after all
// tests. Tests that need their own (3 nodes, killing servers) use
// enstest.Start instead. Each test works under its own path (testPath), so
// tests do not see each other's nodes.
var shared struct {
	once sync.Once
	ens  *ensemble.Ensemble
	dir  string
	err  error
}

func startShared() {
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "zkherd-recipes-test-")
		if shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		shared.ens, shared.err = ensemble.Start(ctx, ensemble.Options{Nodes: 1, NoFsync: true, Dir: shared.dir, HeapMB: 256})
	})
}

func stopShared() {
	if shared.ens != nil {
		if err := shared.ens.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the shared ensemble: %v\n", err)
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// SharedTestServers returns the shared test ensemble's servers, starting it
// if need be; for Examples, which have no *testing.T. It panics when
// ZooKeeper cannot start (the message says why).
func SharedTestServers() []string {
	startShared()
	if shared.err != nil {
		panic(fmt.Sprintf("recipes tests: no ZooKeeper: %v", shared.err))
	}
	return shared.ens.Servers()
}

// sharedServers is SharedTestServers for tests: it fails t instead.
func sharedServers(t testing.TB) []string {
	t.Helper()
	startShared()
	if shared.err != nil {
		t.Fatalf("recipes tests: no ZooKeeper: %v", shared.err)
	}
	return shared.ens.Servers()
}

// testCtx is a context that ends with the test, or after limit.
func testCtx(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}

// testPath is a znode path unique to the test: /zkherd-test/<test name>.
func testPath(t testing.TB) string {
	r := strings.NewReplacer("/", "_", " ", "_", ":", "_", "#", "_")
	return "/zkherd-test/" + r.Replace(t.Name())
}

// newTestSession opens a session to servers, closed when the test ends.
func newTestSession(t testing.TB, servers []string, opts ...SessionOption) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewSession(ctx, servers, opts...)
	if err != nil {
		t.Fatalf("NewSession(%v): %v", servers, err)
	}
	t.Cleanup(s.Close)
	return s
}

// newSessions opens n sessions to servers.
func newSessions(t testing.TB, n int, servers []string, opts ...SessionOption) []*Session {
	t.Helper()
	out := make([]*Session, n)
	for i := range out {
		out[i] = newTestSession(t, servers, opts...)
	}
	return out
}

// newProxy starts a fault proxy to server, closed when the test ends.
func newProxy(t testing.TB, server string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(context.Background(), server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// children lists path's children (nil when path does not exist).
func children(t testing.TB, s *Session, path string) []string {
	t.Helper()
	names, _, err := s.Conn().Children(path)
	if err == zk.ErrNoNode {
		return nil
	}
	if err != nil {
		t.Fatalf("Children(%s): %v", path, err)
	}
	return names
}

// ownerOf returns the ephemeral owner of path (0 if persistent or absent).
func ownerOf(t testing.TB, s *Session, path string) int64 {
	t.Helper()
	ok, stat, err := s.Conn().Exists(path)
	if err != nil {
		t.Fatalf("Exists(%s): %v", path, err)
	}
	if !ok {
		return 0
	}
	return stat.EphemeralOwner
}

// waitFor polls cond every few milliseconds until it holds; it fails the
// test after limit. For conditions no event announces (another session's
// node appearing); never used to order events.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		<-tick.C
	}
}

// result is what a goroutine started by a test reports back, so that only
// the test goroutine fails the test.
type result struct {
	who int
	err error
}
