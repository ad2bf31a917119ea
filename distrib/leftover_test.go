package distrib

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
)

// TestLeftoverOfLostClose is an ephemeral node of a client session whose
// close never reached the servers (its connection swallowed), as a
// run's end on busy servers can leave: the leftover check waits for the
// servers to expire that session and notes the node's going, rather than
// calling it left by a client (docs/SCALE.md's 20,000-contender run).
// A persistent node is still a leftover.
func TestLeftoverOfLostClose(t *testing.T) {
	m, p, direct := proxiedRun(t, "lostclose", 10*time.Second)
	ns := m.Namespace(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := recipes.NewSession(ctx, []string{p.Addr()}, recipes.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	acl := zk.WorldACL(zk.PermAll)
	for _, d := range []string{ns, ns + "/held-lock-000"} {
		if _, err := direct.Conn().Create(d, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	record := ns + "/held-lock-000/w-p0-1-0-_c_x-lock-0000000001"
	if _, err := client.Conn().Create(record, nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	// The client closes its session while its connection is swallowed:
	// the close never reaches the server.
	p.SetDropping(true)
	client.Close()
	p.SetDropping(false)
	if ok, _, err := direct.Conn().Exists(record); err != nil || !ok {
		t.Fatalf("the record went at once (exists %v, %v): the close reached the server, the test tests nothing", ok, err)
	}
	res := &loadgen.Result{}
	m.checkLeftovers(ctx, 0, res, 0, 2*4*time.Second+5*time.Second)
	if res.Checks.LeftoverZnodes != 0 || len(res.Checks.Violations) != 0 {
		t.Errorf("leftovers %d, violations %q; want none: the node went when its session expired", res.Checks.LeftoverZnodes, res.Checks.Violations)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "1 node(s) found in the shared namespace after every process finished (e.g. "+record+") went within") {
		t.Errorf("notes %q; want one saying the node went on its session's expiry", res.Notes)
	}

	// A persistent recipe node is left for good.
	node := ns + "/lock-000/lock-0000000002"
	if err := direct.Conn().Delete(ns+"/held-lock-000", -1); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ns + "/lock-000", node} {
		if _, err := direct.Conn().Create(d, nil, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	res = &loadgen.Result{}
	m.checkLeftovers(ctx, 0, res, 0, time.Second)
	if res.Checks.LeftoverZnodes != 1 || len(res.Checks.Violations) != 1 {
		t.Errorf("leftovers %d, violations %q; want the persistent node", res.Checks.LeftoverZnodes, res.Checks.Violations)
	}
	direct.Conn().Delete(node, -1)
}
