package ensemble_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
)

// orphanEnv makes the test binary act as a program that starts a paused
// one-node ensemble in the directory it names and waits to be killed.
const orphanEnv = "ENSEMBLE_TEST_ORPHAN_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(orphanEnv); dir != "" {
		os.Exit(orphanMain(dir))
	}
	goleak.VerifyTestMain(m)
}

func orphanMain(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ens, err := ensemble.Start(ctx, ensemble.Options{NoFsync: true, QuickStart: true, Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := ens.Pause(1); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("started")
	<-ctx.Done() // the test kills us long before
	return 1
}

// connect opens a session to servers, tried in the given order, and waits
// until it is established.
func connect(t *testing.T, servers []string, timeout time.Duration) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(servers, timeout, zk.WithLogInfo(false), zk.WithHostProvider(&orderedHosts{servers: servers}))
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

// fourLetterWord sends cmd to addr and returns the reply.
func fourLetterWord(t *testing.T, addr, cmd string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(cmd)); err != nil {
		t.Fatalf("send %s to %s: %v", cmd, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("read %s reply from %s: %v", cmd, addr, err)
	}
	return string(b)
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
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ens, err := ensemble.Start(ctx, ensemble.Options{NoFsync: true, QuickStart: true, Logf: t.Logf})
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
	if got := fourLetterWord(t, m.ClientAddr, "mntr"); !strings.Contains(got, "zk_server_state\tstandalone") {
		t.Errorf("mntr reply %q lacks zk_server_state standalone: is the whitelist open?", got)
	}
	if got := fourLetterWord(t, m.ClientAddr, "conf"); !strings.Contains(got, "clientPortListenBacklog=4096") {
		t.Errorf("conf reply %q lacks clientPortListenBacklog=4096: the client port's accept queue is Java's 50", got)
	}
	if m.AdminURL == "" {
		t.Errorf("member %+v has no AdminURL, want the AdminServer running", m)
	} else {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := client.Get(m.AdminURL + "/monitor")
		if err != nil {
			t.Errorf("GET %s/monitor: %v", m.AdminURL, err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s/monitor: %s, want 200 OK", m.AdminURL, resp.Status)
			}
		}
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

// orderedHosts is a zk.HostProvider that tries its servers in order, so a
// test knows which member a session uses. zk.Connect shuffles the servers it
// passes to Init, so Init ignores them.
type orderedHosts struct {
	mu      sync.Mutex
	servers []string
	next    int
	tried   int // servers tried since the last connection
}

func (h *orderedHosts) Init([]string) error { return nil }

func (h *orderedHosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

func (h *orderedHosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.servers[h.next%len(h.servers)]
	h.next++
	h.tried++
	return s, h.tried > len(h.servers)
}

func (h *orderedHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tried = 0
}

// eventually calls f every 100ms until it succeeds or d has passed, and
// returns how long that took and f's last error.
func eventually(d time.Duration, f func() error) (time.Duration, error) {
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil || time.Since(start) > d {
			return time.Since(start), err
		}
		<-tick.C
	}
}

// memberByAddr returns the ID of the member serving clients on addr.
func memberByAddr(t *testing.T, ens *ensemble.Ensemble, addr string) int {
	t.Helper()
	for _, m := range ens.Members() {
		if m.ClientAddr == addr {
			return m.ID
		}
	}
	t.Fatalf("no member serves %q", addr)
	return 0
}

// servingFirst returns every server with member id's first.
func servingFirst(ens *ensemble.Ensemble, id int) []string {
	servers := ens.Servers()
	first := servers[id-1]
	rest := append(servers[:id-1:id-1], servers[id:]...)
	return append([]string{first}, rest...)
}

func TestThreeNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	start := time.Now()
	ens, err := ensemble.Start(ctx, ensemble.Options{Nodes: 3, NoFsync: true, QuickStart: true, HeapMB: 96, Logf: t.Logf})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("3 members serving after %v", time.Since(start).Round(time.Millisecond))
	dir := ens.Dir()
	defer func() {
		if t.Failed() {
			for _, m := range ens.Members() {
				t.Logf("member %d (%v):\n%s", m.ID, m.State, enstest.LogTail(m.LogFile, 15))
			}
		}
		if err := ens.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if pids := javaProcessesUnder(t, dir); len(pids) > 0 {
			t.Errorf("processes %v still run from %s after Stop", pids, dir)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Stat(%s) after Stop: %v, want not exist", dir, err)
		}
	}()

	if got := len(strings.Split(ens.ConnectString(), ",")); got != 3 {
		t.Fatalf("ConnectString() = %q has %d servers, want 3", ens.ConnectString(), got)
	}
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatalf("Leader: %v", err)
	}
	for _, m := range ens.Members() {
		want := "follower"
		if m.ID == leader {
			want = "leader"
		}
		if got, err := ens.Mode(ctx, m.ID); err != nil || got != want {
			t.Errorf("Mode(%d) = %q, %v; want %q", m.ID, got, err, want)
		}
		if m.AdminURL == "" || m.PeerAddr == "" || m.ElectionAddr == "" {
			t.Errorf("member %+v lacks an AdminURL, PeerAddr or ElectionAddr", m)
		}
	}
	servers := ens.Servers()

	ok := t.Run("write through one member, read through another", func(t *testing.T) {
		w := connect(t, servers[0:1], 10*time.Second)
		r := connect(t, servers[2:3], 10*time.Second)
		if _, err := w.Create("/across", []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("Create via %s: %v", servers[0], err)
		}
		if _, err := r.Sync("/across"); err != nil {
			t.Fatalf("Sync via %s: %v", servers[2], err)
		}
		got, _, err := r.Get("/across")
		if err != nil || string(got) != "v1" {
			t.Errorf("Get via %s = %q, %v; want v1", servers[2], got, err)
		}
	})
	if !ok {
		return
	}

	const sessionTimeout = 10 * time.Second
	ok = t.Run("kill the leader, a new one is elected and writes succeed", func(t *testing.T) {
		conn := connect(t, servingFirst(ens, leader), sessionTimeout)
		if got := memberByAddr(t, ens, conn.Server()); got != leader {
			t.Fatalf("session on member %d, want the leader %d", got, leader)
		}
		session := conn.SessionID()
		if err := ens.Kill(leader); err != nil {
			t.Fatalf("Kill(%d): %v", leader, err)
		}
		killed := time.Now()
		if st := ens.Members()[leader-1]; st.State != ensemble.Stopped || st.PID != 0 {
			t.Errorf("after Kill member %d is %v with PID %d, want stopped with PID 0", leader, st.State, st.PID)
		}
		wctx, wcancel := context.WithTimeout(ctx, sessionTimeout)
		defer wcancel()
		newLeader, err := ens.WaitLeader(wctx)
		if err != nil || newLeader == leader {
			t.Fatalf("WaitLeader after killing %d = %d, %v; want another member", leader, newLeader, err)
		}
		took, err := eventually(sessionTimeout, func() error {
			_, err := conn.Create("/after-kill", nil, 0, zk.WorldACL(zk.PermAll))
			return err
		})
		if err != nil {
			t.Fatalf("Create after killing the leader still fails after %v: %v", took, err)
		}
		if since := time.Since(killed); since > sessionTimeout {
			t.Errorf("writes resumed %v after the kill, want within the session timeout %v", since, sessionTimeout)
		}
		if got := conn.SessionID(); got != session {
			t.Errorf("session is %#x after failover, want the same %#x", got, session)
		}
		t.Logf("new leader %d; writes resumed %v after the kill", newLeader, time.Since(killed).Round(time.Millisecond))

		if err := ens.Restart(ctx, leader); err != nil {
			t.Fatalf("Restart(%d): %v", leader, err)
		}
		if got, err := ens.Mode(ctx, leader); err != nil || got != "follower" {
			t.Errorf("Mode(%d) after Restart = %q, %v; want follower", leader, got, err)
		}
		if got, err := ens.Leader(ctx); err != nil || got != newLeader {
			t.Errorf("Leader after Restart = %d, %v; want %d", got, err, newLeader)
		}
		leader = newLeader
	})
	if !ok {
		return
	}

	t.Run("pause the member a client uses, the client fails over", func(t *testing.T) {
		paused := leader%3 + 1 // a follower
		// The client notices the silence after 2/3 of this; the server
		// expires the session after all of it: leave room to fail over.
		const sessionTimeout = 8 * time.Second
		conn := connect(t, servingFirst(ens, paused), sessionTimeout)
		if got := memberByAddr(t, ens, conn.Server()); got != paused {
			t.Fatalf("session on member %d, want %d", got, paused)
		}
		session := conn.SessionID()
		if err := ens.Pause(paused); err != nil {
			t.Fatalf("Pause(%d): %v", paused, err)
		}
		if got := ens.Members()[paused-1].State; got != ensemble.Paused {
			t.Errorf("member %d is %v after Pause, want paused", paused, got)
		}
		if err := ens.Pause(paused); !errors.Is(err, ensemble.ErrMemberState) {
			t.Errorf("second Pause(%d) = %v, want ErrMemberState", paused, err)
		}
		took, err := eventually(2*sessionTimeout, func() error {
			_, err := conn.Create("/after-pause", nil, 0, zk.WorldACL(zk.PermAll))
			return err
		})
		if err != nil {
			t.Fatalf("Create after pausing member %d still fails after %v: %v", paused, took, err)
		}
		if got := memberByAddr(t, ens, conn.Server()); got == paused {
			t.Errorf("session still on paused member %d", paused)
		}
		if got := conn.SessionID(); got != session {
			t.Errorf("session is %#x after failover, want the same %#x", got, session)
		}
		t.Logf("client failed over to %s after %v", conn.Server(), took.Round(time.Millisecond))

		if err := ens.Resume(paused); err != nil {
			t.Fatalf("Resume(%d): %v", paused, err)
		}
		took, err = eventually(30*time.Second, func() error {
			md, err := ens.Mode(ctx, paused)
			if err == nil && md != "follower" {
				err = errors.New("mode " + md)
			}
			return err
		})
		if err != nil {
			t.Errorf("member %d not a serving follower %v after Resume: %v", paused, took, err)
		}
		// Leave it paused for Stop, which must end stopped processes too.
		if err := ens.Pause(paused); err != nil {
			t.Errorf("Pause(%d) again: %v", paused, err)
		}
	})
}

func TestFind(t *testing.T) {
	fakeHome := t.TempDir()
	for _, jar := range []string{"zookeeper-3.8.4.jar", "zookeeper-jute-3.8.4.jar", "jetty-server-9.4.53.jar", "javax.servlet-api-3.1.0.jar"} {
		mkfile(t, filepath.Join(fakeHome, "lib", jar), 0o644)
	}
	noServerJar := t.TempDir()
	mkfile(t, filepath.Join(noServerJar, "lib", "zookeeper-jute-3.8.4.jar"), 0o644)
	fakeJava := t.TempDir()
	mkfile(t, filepath.Join(fakeJava, "bin", "java"), 0o755)

	tests := []struct {
		name       string
		zkHome     string
		javaHome   string
		wantErr    error
		wantSource string
		wantJava   string
		wantAdmin  bool
	}{
		{name: "bogus ZOOKEEPER_HOME", zkHome: "/nonexistent/zookeeper", wantErr: ensemble.ErrZooKeeperNotFound},
		{name: "ZOOKEEPER_HOME without the server jar", zkHome: noServerJar, wantErr: ensemble.ErrZooKeeperNotFound},
		{name: "bogus JAVA_HOME", zkHome: fakeHome, javaHome: "/nonexistent/jdk", wantErr: ensemble.ErrJavaNotFound},
		{name: "JAVA_HOME without bin/java", zkHome: fakeHome, javaHome: noServerJar, wantErr: ensemble.ErrJavaNotFound},
		{name: "release layout", zkHome: fakeHome, javaHome: fakeJava,
			wantSource: "ZOOKEEPER_HOME", wantJava: filepath.Join(fakeJava, "bin", "java"), wantAdmin: true},
		{name: "debian package", javaHome: fakeJava,
			wantSource: "debian", wantJava: filepath.Join(fakeJava, "bin", "java"), wantAdmin: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ZOOKEEPER_HOME", tt.zkHome)
			t.Setenv("JAVA_HOME", tt.javaHome)
			t.Setenv("PATH", "")
			inst, err := ensemble.Find()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Find() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "apt-get install") {
					t.Errorf("Find() error %q lacks the install command", err)
				}
				return
			}
			if inst.Source != tt.wantSource || inst.Java != tt.wantJava || inst.AdminServer != tt.wantAdmin {
				t.Errorf("Find() = %+v, want Source %q, Java %q, AdminServer %v", inst, tt.wantSource, tt.wantJava, tt.wantAdmin)
			}
		})
	}
}

func mkfile(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, perm); err != nil {
		t.Fatal(err)
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	inst, err := ensemble.Find()
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	noJars := inst
	noJars.ClassPath = nil
	tests := []struct {
		name    string
		opts    ensemble.Options
		wantErr string
	}{
		{name: "two nodes", opts: ensemble.Options{Nodes: 2}, wantErr: "want 1, 3, 5 or 7"},
		{name: "server jar missing", opts: ensemble.Options{Installation: &noJars},
			wantErr: "QuorumPeerMain"}, // from the JVM's own message, quoted from the log
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tt.opts.Dir = t.TempDir()
			ens, err := ensemble.Start(ctx, tt.opts)
			if err == nil {
				ens.Stop()
				t.Fatalf("Start(%+v) succeeded, want an error containing %q", tt.opts, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Start error = %q, want it to contain %q", err, tt.wantErr)
			}
			if pids := javaProcessesUnder(t, tt.opts.Dir); len(pids) > 0 {
				t.Errorf("processes %v left running from %s", pids, tt.opts.Dir)
			}
		})
	}
}

// TestOrphanedServersDie kills a program that started an ensemble, without
// letting it call Stop, and checks its JVM (paused, at that) dies too.
func TestOrphanedServersDie(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q, %v; want started", line, err)
	}
	if pids := javaProcessesUnder(t, dir); len(pids) != 1 {
		t.Errorf("helper runs %d processes from %s, want 1", len(pids), dir)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	took, err := eventually(10*time.Second, func() error {
		if pids := javaProcessesUnder(t, dir); len(pids) > 0 {
			return fmt.Errorf("processes %v still run from %s", pids, dir)
		}
		return nil
	})
	if err != nil {
		t.Errorf("%v %v after their owner was killed", err, took)
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	errTests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{name: "kill member 0", op: func() error { return ens.Kill(0) }, wantErr: ensemble.ErrUnknownMember},
		{name: "pause member 2", op: func() error { return ens.Pause(2) }, wantErr: ensemble.ErrUnknownMember},
		{name: "resume a running member", op: func() error { return ens.Resume(1) }, wantErr: ensemble.ErrMemberState},
		{name: "restart a running member", op: func() error { return ens.Restart(ctx, 1) }, wantErr: ensemble.ErrMemberState},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.op(); !errors.Is(err, tt.wantErr) {
				t.Errorf("got %v, want %v", err, tt.wantErr)
			}
		})
	}

	ok := t.Run("after StopMember, on the same port and data", func(t *testing.T) {
		before := ens.Members()[0]
		conn := connect(t, ens.Servers(), 5*time.Second)
		if _, err := conn.Create("/kept", []byte("data"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("Create: %v", err)
		}
		conn.Close()
		if err := ens.StopMember(1); err != nil {
			t.Fatalf("StopMember(1): %v", err)
		}
		if got := ens.Members()[0]; got.State != ensemble.Stopped || got.PID != 0 {
			t.Errorf("after StopMember: %v with PID %d, want stopped with PID 0", got.State, got.PID)
		}
		if err := ens.Restart(ctx, 1); err != nil {
			t.Fatalf("Restart(1): %v", err)
		}
		after := ens.Members()[0]
		if after.ClientAddr != before.ClientAddr || after.DataDir != before.DataDir || after.PID == before.PID {
			t.Errorf("after Restart %+v, want the address and data dir of %+v and a new PID", after, before)
		}
		conn = connect(t, ens.Servers(), 5*time.Second)
		got, _, err := conn.Get("/kept")
		if err != nil || string(got) != "data" {
			t.Errorf("Get(/kept) after Restart = %q, %v; want data", got, err)
		}
	})
	if !ok {
		return
	}

	t.Run("after Kill, with the port taken", func(t *testing.T) {
		addr := ens.Servers()[0]
		if err := ens.Kill(1); err != nil {
			t.Fatalf("Kill(1): %v", err)
		}
		if err := ens.Kill(1); !errors.Is(err, ensemble.ErrMemberState) {
			t.Errorf("second Kill(1) = %v, want ErrMemberState", err)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("Listen(%s): %v", addr, err)
		}
		defer l.Close()
		err = ens.Restart(ctx, 1)
		if !errors.Is(err, ensemble.ErrPortInUse) {
			t.Fatalf("Restart(1) with its port taken = %v, want ErrPortInUse", err)
		}
		if first, _, _ := strings.Cut(err.Error(), "\n"); !strings.Contains(first, "client") {
			t.Errorf("error's first line %q does not name the ports", first)
		}
		if got := ens.Members()[0].State; got != ensemble.Stopped {
			t.Errorf("member 1 is %v after the failed Restart, want stopped", got)
		}
		l.Close()
		if err := ens.Restart(ctx, 1); err != nil {
			t.Fatalf("Restart(1) with its port free: %v", err)
		}
		if _, err := ens.Leader(ctx); err != nil {
			t.Errorf("Leader after Restart: %v", err)
		}
	})
}

// TestFixedClientPort: a chosen client port is used, and a taken one fails
// at once with ErrPortInUse naming the address, leaving nothing behind.
func TestFixedClientPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, err = ensemble.Start(context.Background(), ensemble.Options{ClientPort: taken, Dir: dir, NoFsync: true, QuickStart: true})
	l.Close()
	if !errors.Is(err, ensemble.ErrPortInUse) {
		t.Fatalf("Start on a taken port: %v, want ErrPortInUse", err)
	}
	if want := fmt.Sprintf("127.0.0.1:%d", taken); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}

	ens, err := ensemble.Start(context.Background(), ensemble.Options{ClientPort: taken, Dir: dir, NoFsync: true, QuickStart: true})
	if err != nil {
		t.Fatalf("Start on the freed port: %v", err)
	}
	defer ens.Stop()
	if got, want := ens.ConnectString(), fmt.Sprintf("127.0.0.1:%d", taken); got != want {
		t.Errorf("ConnectString() = %q, want %q", got, want)
	}
}
