package recipes

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/faultproxy"
)

// TestReplyTooLargeFailsClearly: a child list larger than the session's
// receive buffer makes go-zookeeper drop the connection. Retrying would
// loop for ever; the lock must instead fail with ErrReplyTooLarge, naming
// the fix, and leave no node behind.
func TestReplyTooLargeFailsClearly(t *testing.T) {
	servers := sharedServers(t)
	dir := testPath(t)
	big := newTestSession(t, servers)
	for i := range 100 {
		name := fmt.Sprintf("%s/_c_%032d-lock-%010d", dir, i, i)
		if _, err := big.Conn().Create(name, nil, 0, zk.WorldACL(zk.PermAll)); errors.Is(err, zk.ErrNoNode) {
			if err := ensurePath(testCtx(t, 10*time.Second), big, dir); err != nil {
				t.Fatal(err)
			}
			_, err = big.Conn().Create(name, nil, 0, zk.WorldACL(zk.PermAll))
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		names, _, _ := big.Conn().Children(dir)
		for _, n := range names {
			big.Conn().Delete(dir+"/"+n, -1)
		}
	})

	// 100 names of ~60 bytes do not fit in 2 KiB.
	small := newTestSession(t, servers, WithBufferSizes(4096, 2048))
	ctx := testCtx(t, 30*time.Second)
	err := NewLock(small, dir).Lock(ctx)
	if !errors.Is(err, ErrReplyTooLarge) {
		t.Fatalf("Lock with a too small receive buffer: %v, want ErrReplyTooLarge", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Lock returned only when its ctx ended: it retried instead of failing")
	}
	names, _, err := big.Conn().Children(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 100 {
		t.Errorf("%d children after the failed Lock, want the 100 created here (no node of the lock left)", len(names))
	}
}

// TestCloseEndsAHandshakeInProgress: a session whose server accepted the
// connection and never answered (here a partition: the proxy swallows
// every packet) is closed when its open gives up; go-zookeeper's own
// Close does not end the handshake's read, which waits ten times the
// receive timeout (about 67 s at the default 10 s session timeout), so
// the session's goroutines would stay that long.
func TestCloseEndsAHandshakeInProgress(t *testing.T) {
	servers := sharedServers(t)
	ctx := testCtx(t, 30*time.Second)
	p, err := faultproxy.New(ctx, servers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetDropping(true)

	openCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if s, err := NewSession(openCtx, []string{p.Addr()}); err == nil {
		s.Close()
		t.Fatal("NewSession through a partition succeeded, want it to give up")
	}
	// NewSession closed the session when it gave up.
	deadline := time.Now().Add(5 * time.Second)
	for handshakes() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d go-zookeeper handshake(s) still waiting 5 s after the session was closed", handshakes())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// handshakes counts goroutines in go-zookeeper's handshake.
func handshakes() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "zk.(*Conn).authenticate")
}
