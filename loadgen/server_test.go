package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/fourlw"
)

// startLimitedServer starts a real standalone ZooKeeper that accepts at most
// maxCnxns connections per client address (the ensemble package always
// lifts that limit), and stops it when the test ends.
func startLimitedServer(t *testing.T, maxCnxns int) string {
	t.Helper()
	inst, err := ensemble.Find()
	if err != nil {
		t.Fatalf("find ZooKeeper: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=%d\n"+
		"4lw.commands.whitelist=*\nadmin.enableServer=false\nforceSync=no\nminSessionTimeout=1000\n",
		filepath.Join(dir, "data"), port, maxCnxns)
	cfgFile := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "zookeeper.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inst.Java, "-Xmx128m", "-XX:+UseSerialGC", "-cp", strings.Join(inst.ClassPath, string(os.PathListSeparator)),
		"org.apache.zookeeper.server.ZooKeeperServerMain", cfgFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ZooKeeper: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		qctx, qcancel := context.WithTimeout(ctx, time.Second)
		_, err := fourlw.QueryTLS(qctx, addr, "srvr", nil)
		qcancel()
		if err == nil {
			return addr
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ZooKeeper with maxClientCnxns=%d did not start: %v", maxCnxns, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestConnectionLimit(t *testing.T) {
	addr := startLimitedServer(t, 10)
	tests := []struct {
		name        string
		sourceAddrs int
		wantErr     error
	}{
		// 25 sessions plus the run's own and mntr from one address: refused,
		// and said so plainly.
		{name: "one address", sourceAddrs: 1, wantErr: ErrRefused},
		// Spread over 5 loopback addresses: 5 sessions each, under the limit.
		{name: "spread", sourceAddrs: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := shortRun(t, "fair-lock", 25, time.Second)
			run.SessionTimeout = 4 * time.Second
			res, err := Run(context.Background(), run, Options{Servers: []string{addr}, SourceAddrs: tt.sourceAddrs})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				t.Logf("error: %v", err)
				for _, want := range []string{"maxClientCnxns", "closed new connections right after they were opened"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				return
			}
			if !res.Checks.Passed || res.Ops == 0 {
				t.Errorf("spread run: ops %d, checks %v", res.Ops, res.Checks.Violations)
			}
			if res.SourceAddrs != tt.sourceAddrs {
				t.Errorf("SourceAddrs = %d, want %d", res.SourceAddrs, tt.sourceAddrs)
			}
		})
	}
}

func TestServerLostMidRun(t *testing.T) {
	ens := enstest.Start(t, 1)
	run := shortRun(t, "fair-lock", 10, time.Minute)
	run.SessionTimeout = 2 * time.Second
	killed := false
	start := time.Now()
	_, err := Run(context.Background(), run, Options{
		Servers:  ens.Servers(),
		Interval: 200 * time.Millisecond,
		Progress: func(p Progress) {
			if p.Ops > 10 && !killed {
				killed = true
				if err := ens.Kill(1); err != nil {
					t.Errorf("kill: %v", err)
				}
			}
		},
	})
	if !killed {
		t.Fatalf("the server was never killed")
	}
	t.Logf("error: %v", err)
	if !errors.Is(err, ErrServerLost) {
		t.Fatalf("Run error = %v, want ErrServerLost", err)
	}
	if !strings.Contains(err.Error(), ens.Servers()[0]) {
		t.Errorf("error %q does not name the server", err)
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("Run took %v to notice, want well under a minute", d)
	}
}
