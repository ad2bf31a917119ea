package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestInspectDrillDownInTmux moves around the inspector as a k9s user
// would (issue 26): Enter from a lock to its chain and from a waiter to its
// node in the Tree, s to its session with the session's ephemerals and
// watches, Enter from a queue to its head item, and [ ] back and forward
// through the places visited.
func TestInspectDrillDownInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	c := zkConnect(t, ens.Servers())
	world := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/nav", "/nav/lock", "/nav/jobs"} {
		if _, err := c.Create(p, nil, 0, world); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, err := c.Create("/nav/jobs/qn-", []byte(fmt.Sprintf("job %d", i)), zk.FlagSequence, world); err != nil {
			t.Fatal(err)
		}
	}
	holderConn, waiterConn := zkConnect(t, ens.Servers()), zkConnect(t, ens.Servers())
	holder, err := holderConn.Create(fmt.Sprintf("/nav/lock/_c_%s-lock-", uuid.NewString()), nil, zk.FlagEphemeral|zk.FlagSequence, world)
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := waiterConn.Create(fmt.Sprintf("/nav/lock/_c_%s-lock-", uuid.NewString()), nil, zk.FlagEphemeral|zk.FlagSequence, world)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := waiterConn.ExistsW(holder); err != nil {
		t.Fatal(err)
	}
	waiterSession := fmt.Sprintf("0x%x", waiterConn.SessionID())

	s := newTmuxScreen(t, 120, 40, fmt.Sprintf("exec %s inspect --server %s", bin, ens.ConnectString()))
	s.wait(30*time.Second, "Tree")
	s.keys("2")
	s.wait(60*time.Second, "/nav/lock", "1 holding → 1 waiting")
	t.Log("step: lock -> chain -> the waiter's node in the Tree")
	s.keys("Enter", "j", "Enter")
	s.wait(10*time.Second, "Tree  /nav/lock", waiter, "ephemeral", "owner "+waiterSession)
	t.Log("step: the node's owner session, with its ephemerals and watches")
	s.keys("s")
	s.wait(10*time.Second, "ephemerals and data watches of "+waiterSession, "ephemeral", holder)
	t.Log("step: back to the Tree, back to Locks, forward to the Tree")
	s.keys("[")
	s.wait(10*time.Second, "Tree  /nav/lock", "owner "+waiterSession)
	s.keys("BSpace")
	s.wait(10*time.Second, "Locks  ", "1 holding → 1 waiting")
	s.keys("]")
	s.wait(10*time.Second, "Tree  /nav/lock", "owner "+waiterSession)
	t.Log("step: a queue to its head item")
	s.keys("3")
	s.wait(60*time.Second, "/nav/jobs")
	s.keys("Enter")
	s.wait(10*time.Second, "Tree  /nav/jobs", "/nav/jobs/qn-0000000000", "job 0")
	s.keys("q")
}
