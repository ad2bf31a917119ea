package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/tui/loadview"
)

// syncBuffer is an io.Writer the test can read while the program writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.Strip(s.b.String())
}

func (s *syncBuffer) Raw() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitOutput waits until the screen output contains all of want.
func waitOutput(ctx context.Context, t *testing.T, out *syncBuffer, want ...string) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := ""
		got := out.String()
		for _, w := range want {
			if !strings.Contains(got, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("screen never showed %q; last output:\n%s\nraw: %q", missing, tail(got, 3000), tail(out.Raw(), 600))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestRunInspect drives RunInspect end to end against a real server: a
// lock chain built by hand from three sessions shows in the Locks view,
// and q quits.
func TestRunInspect(t *testing.T) {
	ens := enstest.Start(t, 1)
	servers := ens.Servers()
	var conns []*zk.Conn
	for i := 0; i < 3; i++ {
		c, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range events {
			}
		}()
		defer c.Close()
		conns = append(conns, c)
	}
	if _, err := conns[0].Create("/locks", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var prev string
	for _, c := range conns {
		name, err := c.Create("/locks/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		if prev != "" {
			if _, _, _, err := c.ExistsW(prev); err != nil {
				t.Fatal(err)
			}
		}
		prev = name
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	keys, typeKeys := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- RunInspect(ctx, InspectOptions{
			ConnectString: strings.Join(servers, ","), NoColor: true,
			PollInterval: 200 * time.Millisecond,
			Input:        keys, Output: out, size: [2]int{100, 30},
		})
	}()
	waitOutput(ctx, t, out, "1 Tree", "zookeeper")
	if _, err := io.WriteString(typeKeys, "2"); err != nil {
		t.Fatal(err)
	}
	waitOutput(ctx, t, out, "1 holding → 2 waiting", "HOLD", "wait", "0000000001", "→0 ok")
	if _, err := io.WriteString(typeKeys, "q"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunInspect: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("RunInspect did not return after q")
	}
	typeKeys.Close()
}

// TestRunLoad: RunLoad shows the snapshots it is sent, never blocks the
// sender, and returns nil after the run ends and the user quits, or
// ErrQuit if the user quits first.
func TestRunLoad(t *testing.T) {
	tests := []struct {
		name     string
		closeRun bool // the run ends before the user quits
		wantErr  error
		exitWhen bool
	}{
		{name: "quit after the run", closeRun: true},
		{name: "quit during the run", wantErr: ErrQuit},
		{name: "exit when done", closeRun: true, exitWhen: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			updates := make(chan loadview.Snapshot)
			keys, typeKeys := io.Pipe()
			defer typeKeys.Close()
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- RunLoad(ctx, updates, LoadOptions{NoColor: true, ExitWhenDone: tt.exitWhen, Input: keys, Output: out, size: [2]int{80, 24}})
			}()
			// A burst far faster than the screen redraws: none may block, and
			// the newest is what stays on screen. (The renderer draws
			// differences, so the newest carries a title of its own.)
			for i := 0; i < 1000; i++ {
				title := "burst"
				if i == 999 {
					title = "newest-of-1000"
				}
				s := loadview.Snapshot{Title: title, Elapsed: time.Duration(i) * time.Second,
					Scenarios: []loadview.Scenario{{Name: "fair-lock", Clients: 200, SessionsAlive: 200, Ops: int64(i)}}}
				select {
				case updates <- s:
				case <-ctx.Done():
					t.Fatalf("sender blocked at update %d", i)
				}
			}
			waitOutput(ctx, t, out, "newest-of-1000")
			if tt.closeRun {
				close(updates)
			}
			if !tt.exitWhen {
				if tt.closeRun {
					waitOutput(ctx, t, out, "the load run has finished")
				}
				io.WriteString(typeKeys, "q")
				if !tt.closeRun {
					// q during a run asks first (TestQuitAsksDuringRun).
					waitOutput(ctx, t, out, "still going")
					io.WriteString(typeKeys, "y")
				}
			}
			select {
			case err := <-done:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("RunLoad = %v, want %v", err, tt.wantErr)
				}
			case <-ctx.Done():
				t.Fatal("RunLoad did not return")
			}
			if !tt.closeRun {
				// RunLoad keeps draining until the sender is done.
				select {
				case updates <- loadview.Snapshot{}:
				case <-ctx.Done():
					t.Fatal("sender blocked after RunLoad returned")
				}
				close(updates)
			}
		})
	}
}
