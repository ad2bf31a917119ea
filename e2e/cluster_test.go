package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/cluster"
	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/syncbuf"
)

// TestClusterUpAndStatus is issue 2's "cluster up --nodes 3 in one terminal,
// cluster status --server <printed> in another": three members, one leader,
// and nothing left behind after the interrupt.
func TestClusterUpAndStatus(t *testing.T) {
	inLane(t, commandLane)
	cmd := exec.Command(zkherdBin(t), "cluster", "up", "--nodes", "3", "--fsync=false")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir()) // its record apart from other tests' clusters
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed once cluster up has exited, with its status in
	// exitErr. interrupt sends one Ctrl-C: a second would stop it at once.
	exited := make(chan struct{})
	var exitErr error
	stopped := false
	interrupt := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(os.Interrupt)
		}
	}
	t.Cleanup(func() {
		interrupt()
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
		}
	})
	ctx := t.Context()

	var connect string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "connect string: "); ok {
			connect = s
			break
		}
	}
	go func() {
		io.Copy(io.Discard, pr)
		exitErr = cmd.Wait()
		close(exited)
	}()
	if connect == "" {
		interrupt()
		<-exited
		t.Fatalf("cluster up printed no connect string; exit: %v\n%s", exitErr, stderr.String())
	}
	cs, err := connstr.Parse(connect)
	if err != nil {
		t.Fatalf("printed connect string %q does not parse: %v", connect, err)
	}
	if got := len(cs.Servers); got != 3 {
		t.Fatalf("connect string has %d servers, want 3", got)
	}

	members := make([]fourlw.Member, len(cs.Servers))
	for i, a := range cs.Servers {
		members[i] = fourlw.Member{ID: i + 1, Addr: a}
	}
	var out bytes.Buffer
	deadline := time.Now().Add(30 * time.Second)
	for {
		out.Reset()
		st := cluster.Poll(ctx, members, 3*time.Second)
		if err := st.WriteText(&out); err != nil {
			t.Fatalf("status: %v", err)
		}
		if st.Healthy && strings.Contains(out.String(), "3 of 3 members up, one leader.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed three members and one leader:\n%s", out.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got := strings.Count(out.String(), " leader "); got != 1 {
		t.Errorf("status shows %d leader rows, want 1:\n%s", got, out.String())
	}
	if got := strings.Count(out.String(), " follower "); got != 2 {
		t.Errorf("status shows %d follower rows, want 2:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "12 of 12 answer") {
		t.Errorf("status does not show every four-letter word answering:\n%s", out.String())
	}

	interrupt()
	select {
	case <-exited:
		if exitErr != nil {
			t.Fatalf("cluster up after interrupt: %v\n%s", exitErr, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("cluster up did not stop within 60s of the interrupt")
	}
	for _, m := range members {
		if _, err := fourlw.QueryTLS(context.Background(), m.Addr, "ruok", nil); err == nil {
			t.Errorf("member %s still answers after stop", m.Addr)
		}
	}
}
