package loadgen

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/internal/queuetest"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// TestQueueCheckListsLargeQueue (issue 23): queue-chaos ended with 21,000
// to 25,000 items queued, and the checker's final listing of the queue
// (about 1.4 MB) was larger than the admin session's 1 MiB receive
// buffer: go-zookeeper dropped the connection, and lost items and
// leftover znodes were "not checked". Here 24,000 items are added to a
// short queue run's queue (in multis, behind every item the run puts, so
// no consumer reaches them: each works 30 s on its first item) before
// the window ends; the checks must list them, count them unconsumed and
// remove them.
func TestQueueCheckListsLargeQueue(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := shortRun(t, "queue", 2, 3*time.Second)
	run.Hold = scenarios.FixedHold(30 * time.Second)

	admin, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	const extra = 24000
	var once sync.Once
	var injectErr error
	res, err := Run(ctx, run, Options{
		Servers:  ens.Servers(),
		RunID:    "bigqueue",
		Interval: 200 * time.Millisecond,
		Progress: func(p Progress) {
			if p.State != "running" {
				return
			}
			// The ticker waits for this: the items are all there before
			// the checks.
			once.Do(func() { injectErr = queuetest.AddItems(admin.Conn(), Root+"/bigqueue/queue", extra) })
		},
	})
	if injectErr != nil {
		t.Fatalf("add %d items: %v", extra, injectErr)
	}
	if res == nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("err %v checks %+v notes %q", err, res.Checks, res.Notes)
	if i := slices.IndexFunc(res.Checks.NotChecked, func(s string) bool { return strings.HasPrefix(s, "lost items:") }); i >= 0 {
		t.Errorf("lost items not checked: %q", res.Checks.NotChecked[i])
	}
	if res.Checks.LostItems != 0 || res.Checks.DuplicateItems != 0 {
		t.Errorf("lost %d, duplicated %d, want 0 and 0", res.Checks.LostItems, res.Checks.DuplicateItems)
	}
	if res.Checks.Unconsumed < extra {
		t.Errorf("unconsumed = %d, want at least the %d items added", res.Checks.Unconsumed, extra)
	}
	if res.Checks.LeftoverZnodes != 0 {
		t.Errorf("leftover znodes = %d, want 0", res.Checks.LeftoverZnodes)
	}
	if runs, _, err := admin.Conn().Children(Root); err == nil && len(runs) != 0 {
		t.Errorf("namespaces left on the servers: %v", runs)
	}
}

// TestListingErrSaysTooLarge: a listing the admin session refused for its
// receive buffer is explained as such, not as a closed connection (here
// with a 4 KiB buffer and 200 children, about 12 KB).
func TestListingErrSaysTooLarge(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, ens.Servers(), recipes.WithBufferSizes(recipes.DefaultBufferSize, 4<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	setup, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	dir := "/many"
	if _, err := setup.Conn().Create(dir, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := queuetest.AddItems(setup.Conn(), dir, 200); err != nil {
		t.Fatal(err)
	}
	r := &runner{admin: s}
	before, _ := s.RepliesTooLarge()
	_, _, err = s.Conn().Children(dir)
	if err == nil {
		t.Fatal("listed 200 children with a 4 KiB buffer")
	}
	err = r.listingErr(dir, err, before)
	if !errors.Is(err, recipes.ErrReplyTooLarge) || !strings.Contains(err.Error(), "listing of /many is larger than the checker's") {
		t.Errorf("listingErr = %v, want the listing said too large for the buffer", err)
	}
	if err := r.listingErr(dir, zk.ErrConnectionClosed, before+1); !strings.Contains(err.Error(), "jute.maxbuffer") {
		t.Errorf("a closed connection with no reply refused: %v, want the server's jute.maxbuffer named as one cause", err)
	}
}
