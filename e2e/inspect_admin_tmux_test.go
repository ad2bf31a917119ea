package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/inspect"
)

// srvrOnly restarts member 1 with only srvr whitelisted, the default of a
// production server. The ensemble package has no option for extra zoo.cfg
// lines, so the line is appended (Java properties: the last one wins).
func srvrOnly(t *testing.T, ens *ensemble.Ensemble) {
	t.Helper()
	if err := ens.StopMember(1); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(ens.Members()[0].ConfigFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("4lw.commands.whitelist=srvr\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := ens.Restart(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// TestInspectAdminFallbackInTmux: against a server whose four-letter-word
// whitelist is srvr only, `zkherd inspect --admin-url` reads sessions,
// their ephemerals and the server's figures from the AdminServer (issue 26,
// finding 8: the admin URLs were never set, so Sessions stayed unknown).
func TestInspectAdminFallbackInTmux(t *testing.T) {
	inLane(t, terminalLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	srvrOnly(t, ens)
	m := ens.Members()[0]
	if m.AdminURL == "" {
		t.Fatal("the ensemble has no AdminServer")
	}
	c := zkConnect(t, ens.Servers())
	if _, err := c.Create("/client-ephemeral", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	client := inspect.SessionHex(c.SessionID())
	s := newTmuxScreen(t, 140, 30, bin+" inspect --server "+ens.ConnectString()+" --admin-url "+strings.TrimSuffix(m.AdminURL, "/commands"))
	s.wait(30*time.Second, "Tree")
	s.keys("4")
	screen := s.wait(30*time.Second, client)
	if strings.Contains(screen, "unavailable") {
		t.Errorf("commands reported unavailable with the AdminServer given:\n%s", screen)
	}
	s.keys("5")
	screen = s.wait(30*time.Second, "standalone")
	t.Logf("servers view:\n%s", screen)
}
