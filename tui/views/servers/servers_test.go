package servers

import (
	"strings"
	"testing"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

func TestView(t *testing.T) {
	for _, fx := range []string{"standalone", "ensemble3", "ensemble3_member_down"} {
		for _, sz := range tuitest.Sizes {
			t.Run(fx+"_"+sz.Name, func(t *testing.T) {
				m := New(common.New(sz.Width, sz.Height))
				m.SetSize(sz.Width, sz.Height)
				m, _ = m.Update(common.SnapshotMsg{Snapshot: tuitest.Cluster(t, fx)})
				got := tuitest.Plain(m.View())
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(m.View()))
			})
		}
	}
}

func TestMemberDownShown(t *testing.T) {
	m := New(common.New(80, 24))
	m, _ = m.Update(common.SnapshotMsg{Snapshot: tuitest.Cluster(t, "ensemble3_member_down")})
	got := tuitest.Plain(m.View())
	if !strings.Contains(got, "DOWN") || !strings.Contains(got, "is down: ") {
		t.Errorf("no member shown DOWN:\n%s", got)
	}
	if n := strings.Count(got, " up    "); n != 2 {
		t.Errorf("got %d members up, want 2:\n%s", n, got)
	}
}

func TestCapabilitiesMissing(t *testing.T) {
	snap := tuitest.Cluster(t, "standalone")
	for i := range snap.Cluster.Capabilities {
		c := &snap.Cluster.Capabilities[i]
		if c.Command == "wchp" || c.Command == "cons" {
			c.Available, c.Enable = false, "4lw.commands.whitelist=*"
		}
	}
	m := New(common.New(80, 24))
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	got := tuitest.Plain(m.View())
	for _, want := range []string{"x cons unavailable on 127.0.0.1:", "x wchp unavailable", "enable: 4lw.commands.whitelist=*"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
}

// TestRatesUnknownShownAsDash: until a member has answered mntr twice (paced
// by its cost, seconds apart on a busy server) its request rate is not
// known, and the table says so rather than showing 0.0.
func TestRatesUnknownShownAsDash(t *testing.T) {
	snap := tuitest.Cluster(t, "standalone")
	mb := &snap.Cluster.Members[0]
	mb.RatesKnown, mb.RequestsPerSec = false, 0
	m := New(common.New(120, 24))
	m, _ = m.Update(common.SnapshotMsg{Snapshot: snap})
	got := tuitest.Plain(m.View())
	row := ""
	for line := range strings.Lines(got) {
		if strings.HasPrefix(line, mb.Addr) {
			row = line
			break
		}
	}
	f := strings.Fields(row)
	if len(f) < 6 || f[5] != "-" {
		t.Errorf("member row %q: req/s column %v, want -", row, f)
	}
}
