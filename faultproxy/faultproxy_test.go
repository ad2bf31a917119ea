package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sessionTimeout is long enough that no test here expires a session.
const sessionTimeout = 10 * time.Second

// connect opens a go-zookeeper session through addr and waits for it.
func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, sessionTimeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("zk.Connect(%s): %v", addr, err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return conn
			}
		case <-deadline:
			t.Fatalf("no session through %s after 30s", addr)
		}
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func newProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitState waits until conn reports want, for at most 30 s.
func waitState(t *testing.T, conn *zk.Conn, want zk.State) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for conn.State() != want {
		if time.Now().After(deadline) {
			t.Fatalf("connection state %v after 30s, want %v", conn.State(), want)
		}
		<-tick.C
	}
}

// exists checks a node directly on the server, not through the proxy.
func exists(t *testing.T, direct *zk.Conn, path string) bool {
	t.Helper()
	ok, _, err := direct.Exists(path)
	if err != nil {
		t.Fatalf("Exists(%s): %v", path, err)
	}
	return ok
}

func TestProxy(t *testing.T) {
	ens := enstest.Start(t, 1)
	server := ens.Servers()[0]
	direct := connect(t, server)

	t.Run("forwards", func(t *testing.T) {
		p := newProxy(t, server)
		c := connect(t, p.Addr())
		if _, err := c.Create("/fwd", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("Create through proxy: %v", err)
		}
		data, _, err := direct.Get("/fwd")
		if err != nil || string(data) != "x" {
			t.Errorf("Get directly = %q, %v; want \"x\", nil", data, err)
		}
		if got := p.Conns(); got != 1 {
			t.Errorf("Conns() = %d, want 1", got)
		}
	})

	t.Run("cut after create: executed, reply lost", func(t *testing.T) {
		p := newProxy(t, server)
		c := connect(t, p.Addr())
		done := p.CutAfter(faultproxy.OpCreate, 1)
		_, err := c.Create("/cut-after", nil, 0, zk.WorldACL(zk.PermAll))
		if !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("Create error = %v, want %v", err, zk.ErrConnectionClosed)
		}
		<-done
		if !exists(t, direct, "/cut-after") {
			t.Errorf("node /cut-after missing: the request should have reached the server")
		}
		waitState(t, c, zk.StateHasSession)
		if _, _, err := c.Exists("/cut-after"); err != nil {
			t.Errorf("after reconnection: %v", err)
		}
	})

	t.Run("cut before delete: not executed", func(t *testing.T) {
		if _, err := direct.Create("/cut-before", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		p := newProxy(t, server)
		c := connect(t, p.Addr())
		p.CutBefore(faultproxy.OpDelete, 1)
		err := c.Delete("/cut-before", -1)
		if !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("Delete error = %v, want %v", err, zk.ErrConnectionClosed)
		}
		if !exists(t, direct, "/cut-before") {
			t.Errorf("node /cut-before deleted: the request should not have reached the server")
		}
	})

	t.Run("cut all keeps the session", func(t *testing.T) {
		p := newProxy(t, server)
		c := connect(t, p.Addr())
		id := c.SessionID()
		if got := p.CutAll(); got != 1 {
			t.Errorf("CutAll() = %d, want 1", got)
		}
		// The cut is noticed by the client and it reconnects on its own.
		var err error
		for range 100 {
			if _, _, err = c.Exists("/"); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("no request went through after the cut: %v", err)
		}
		if got := c.SessionID(); got != id {
			t.Errorf("session 0x%x after reconnection, want the same 0x%x", got, id)
		}
	})

	t.Run("delay", func(t *testing.T) {
		p := newProxy(t, server)
		c := connect(t, p.Addr())
		const d = 50 * time.Millisecond
		p.SetDelay(d)
		start := time.Now()
		if _, _, err := c.Exists("/"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 2*d {
			t.Errorf("round trip %v with %v delay each way, want at least %v", took, d, 2*d)
		}
		p.SetDelay(0)
	})

	t.Run("dropping swallows traffic, undropping recovers", func(t *testing.T) {
		p := newProxy(t, server)
		c := connect(t, p.Addr())
		p.SetDropping(true)
		res := make(chan error, 1)
		go func() {
			_, _, err := c.Exists("/")
			res <- err
		}()
		select {
		case err := <-res:
			t.Fatalf("Exists returned %v through a black hole", err)
		case <-time.After(300 * time.Millisecond):
		}
		p.SetDropping(false) // cuts the lossy connection
		if err := <-res; !errors.Is(err, zk.ErrConnectionClosed) {
			t.Errorf("Exists after the black hole = %v, want %v", err, zk.ErrConnectionClosed)
		}
		waitState(t, c, zk.StateHasSession)
		if _, _, err := c.Exists("/"); err != nil {
			t.Errorf("after recovery: %v", err)
		}
	})

	t.Run("OnRequest sees the protocol", func(t *testing.T) {
		p := newProxy(t, server)
		var (
			mu  sync.Mutex
			ops []int32
		)
		p.OnRequest(func(r faultproxy.Request) faultproxy.Action {
			if r.Op != faultproxy.OpPing {
				mu.Lock()
				ops = append(ops, r.Op)
				mu.Unlock()
			}
			return faultproxy.Forward
		})
		c := connect(t, p.Addr())
		if _, err := c.Create("/seen", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete("/seen", -1); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := slices.Clone(ops)
		mu.Unlock()
		want := []int32{faultproxy.OpConnect, faultproxy.OpCreate, faultproxy.OpDelete}
		if !slices.Equal(got, want) {
			t.Errorf("ops = %v, want %v", got, want)
		}
	})

	t.Run("close", func(t *testing.T) {
		p, err := faultproxy.New(context.Background(), server)
		if err != nil {
			t.Fatal(err)
		}
		c := connect(t, p.Addr())
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		waitState(t, c, zk.StateConnecting)
		if got := p.Conns(); got != 0 {
			t.Errorf("Conns() after Close = %d, want 0", got)
		}
	})
}

func TestIsCreate(t *testing.T) {
	tests := []struct {
		op   int32
		want bool
	}{
		{faultproxy.OpCreate, true},
		{faultproxy.OpCreate2, true},
		{faultproxy.OpCreateContainer, true},
		{faultproxy.OpCreateTTL, true},
		{faultproxy.OpDelete, false},
		{faultproxy.OpMulti, false},
	}
	for _, tt := range tests {
		if got := faultproxy.IsCreate(tt.op); got != tt.want {
			t.Errorf("IsCreate(%d) = %v, want %v", tt.op, got, tt.want)
		}
	}
}

// TestCutWhileDialing: a connection cut (CutConn) right after the proxy
// accepted it, while its server side was still being dialed, closed a nil
// server connection and panicked the load run's chaos fault
// (TestLoadSweepChaos on CI). The cut now closes both sides once the dial
// ends, and the client sees its connection closed.
func TestCutWhileDialing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted sync.WaitGroup
	accepted.Add(1)
	go func() {
		defer accepted.Done()
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	defer accepted.Wait()
	defer ln.Close()
	p, err := faultproxy.New(context.Background(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := 1; i <= 200; i++ {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		// The cut comes as soon as the proxy has the connection: most
		// often before its server side is dialed.
		for deadline := time.Now().Add(10 * time.Second); !p.CutConn(i); runtime.Gosched() {
			if time.Now().After(deadline) {
				t.Fatalf("connection %d never reached the proxy", i)
			}
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("connection %d after the cut: read %v, want it closed", i, err)
		}
		c.Close()
	}
}
