package ensemble_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// connect opens a session to servers and waits until it is established.
func connect(t *testing.T, servers []string, timeout time.Duration) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(servers, timeout, zk.WithLogInfo(false))
	if err != nil {
		t.Fatalf("zk.Connect(%v): %v", servers, err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go drain(events)
				return conn
			}
		case <-deadline:
			t.Fatalf("no session with %v after 30s", servers)
		}
	}
}

// drain consumes session events until the connection closes its channel.
func drain(events <-chan zk.Event) {
	for range events {
	}
}

// javaProcessesUnder returns the PIDs of processes whose command line mentions dir.
func javaProcessesUnder(t *testing.T, dir string) []string {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended meanwhile
		}
		if bytes.Contains(b, []byte(dir)) {
			pids = append(pids, filepath.Base(filepath.Dir(f)))
		}
	}
	return pids
}

func TestStartOneNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ens, err := ensemble.Start(ctx, ensemble.Options{NoFsync: true, Logf: t.Logf})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			ens.Stop()
		}
	}()
	dir := ens.Dir()

	ms := ens.Members()
	if len(ms) != 1 {
		t.Fatalf("got %d members, want 1", len(ms))
	}
	m := ms[0]
	if m.ID != 1 || m.State != ensemble.Running || m.PID == 0 || !strings.HasPrefix(m.ClientAddr, "127.0.0.1:") {
		t.Errorf("got member %+v, want ID 1, running, a PID and a loopback address", m)
	}
	if got, want := ens.ConnectString(), m.ClientAddr; got != want {
		t.Errorf("ConnectString() = %q, want %q", got, want)
	}
	if id, err := ens.Leader(ctx); err != nil || id != 1 {
		t.Errorf("Leader() = %d, %v; want 1, nil", id, err)
	}
	if md, err := ens.Mode(ctx, 1); err != nil || md != "standalone" {
		t.Errorf("Mode(1) = %q, %v; want standalone", md, err)
	}

	conn := connect(t, ens.Servers(), 5*time.Second)
	if _, err := conn.Create("/hello", []byte("world"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	got, _, err := conn.Get("/hello")
	if err != nil || string(got) != "world" {
		t.Errorf("Get(/hello) = %q, %v; want world", got, err)
	}
	conn.Close()

	if err := ens.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	if err := ens.Stop(); err != nil {
		t.Errorf("second Stop: %v, want nil", err)
	}
	if pids := javaProcessesUnder(t, dir); len(pids) > 0 {
		t.Errorf("processes %v still run from %s after Stop", pids, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat(%s) after Stop: %v, want not exist", dir, err)
	}
	if _, err := ens.Leader(ctx); !errors.Is(err, ensemble.ErrStopped) {
		t.Errorf("Leader after Stop: %v, want ErrStopped", err)
	}
}

func TestEnstest(t *testing.T) {
	ens := enstest.Start(t, 1)
	conn := connect(t, ens.Servers(), 5*time.Second)
	if _, err := conn.Create("/x", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("Create: %v", err)
	}
}
