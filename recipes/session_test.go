package recipes

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
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
