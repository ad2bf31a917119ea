package launch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/launch/sshtest"
)

// fakeZkherd writes a shell script standing for zkherd (these tests are
// about starting and stopping processes over ssh; TestHostsRun in
// package main runs the real one against a real ensemble).
func fakeZkherd(t *testing.T, dir, body string) string {
	t.Helper()
	name := filepath.Join(dir, "zkherd")
	if err := os.WriteFile(name, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return name
}

// copiedDirs lists the directories the launcher copied a binary into.
func copiedDirs(t *testing.T, srv *sshtest.Server) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(srv.TmpDir, "zkherd.*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSSHRun: the binary is copied to the host without it (127.0.0.1)
// and taken from the PATH of the one with it (127.0.0.2); the arguments
// and the environment arrive; output comes back prefixed by host; the
// copy is removed at the end.
func TestSSHRun(t *testing.T) {
	srv := sshtest.Start(t)
	body := `echo "args $*"; echo "auth $ZKHERD_AUTH"; echo "on stderr" >&2`
	exe := fakeZkherd(t, t.TempDir(), body)
	fakeZkherd(t, srv.BinDir, body) // the same binary, installed on 127.0.0.2
	var out syncBuffer
	s := &SSH{Hosts: sshtest.Hosts, Executable: exe, Options: srv.Options(srv.Key), Output: &out, Version: "test"}
	ctx := context.Background()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := s.Start(ctx, Join{Args: []string{"load", "--join", "r 1", "it's"}, Env: map[string]string{"ZKHERD_AUTH": "u:p w"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(time.Minute, time.Minute); err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	got := out.String()
	for _, want := range []string{
		"[127.0.0.1] copied this zkherd to " + srv.TmpDir + "/zkherd.",
		"[127.0.0.2] running " + srv.BinDir + "/zkherd (on the host's PATH)",
		"[127.0.0.1] args load --join r 1 it's\n", "[127.0.0.2] args load --join r 1 it's\n",
		"[127.0.0.1] auth u:p w\n", "[127.0.0.2] auth u:p w\n",
		"[127.0.0.1] on stderr\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output has no %q:\n%s", want, got)
		}
	}
	if d := copiedDirs(t, srv); len(d) > 0 {
		t.Errorf("copies left on the host: %v", d)
	}
}

// remotePids are the pids the fake zkherd printed as "ready PID".
func remotePids(t *testing.T, out *syncBuffer, n int) []int {
	t.Helper()
	waitOutput(t, out, "ready ", n)
	var pids []int
	for _, l := range strings.Split(out.String(), "\n") {
		if _, rest, ok := strings.Cut(l, "] ready "); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				t.Fatal(err)
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone waits until none of pids runs.
func waitGone(t *testing.T, pids []int, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && !zombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("remote process %d still runs %v later", pid, bound)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestSSHInterrupt is Ctrl-C at the starter: its context cancelled, the
// remote processes get SIGTERM and stop; the copies are removed.
func TestSSHInterrupt(t *testing.T) {
	srv := sshtest.Start(t)
	exe := fakeZkherd(t, t.TempDir(), `trap 'echo stopping; exit 0' TERM; echo "ready $$"; while :; do sleep 0.1; done`)
	var out syncBuffer
	s := &SSH{Hosts: sshtest.Hosts, Executable: exe, Options: srv.Options(srv.Key), Output: &out}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := s.Start(ctx, Join{Args: []string{"load"}})
	if err != nil {
		t.Fatal(err)
	}
	pids := remotePids(t, &out, 2)
	cancel()
	select {
	case <-g.Exited():
	case <-time.After(time.Minute):
		t.Fatalf("not stopped a minute after the interrupt:\n%s", out.String())
	}
	if err := g.Close(0, time.Minute); err != nil {
		t.Errorf("Close() = %v, want nil (they stopped on the interrupt)\n%s", err, out.String())
	}
	if strings.Count(out.String(), "stopping") != 2 {
		t.Errorf("output:\n%s\nwant both stopping", out.String())
	}
	waitGone(t, pids, time.Minute)
	if d := copiedDirs(t, srv); len(d) > 0 {
		t.Errorf("copies left on the host: %v", d)
	}
}

// TestSSHKill: a remote process that ignores SIGTERM is killed once the
// starter's grace is over (ssh killed, the end of input on the host)
// and RemoteGrace later on the host.
func TestSSHKill(t *testing.T) {
	srv := sshtest.Start(t)
	exe := fakeZkherd(t, t.TempDir(), `trap '' TERM; echo "ready $$"; while :; do sleep 0.1; done`)
	var out syncBuffer
	s := &SSH{Hosts: sshtest.Hosts[:1], Executable: exe, Options: srv.Options(srv.Key), Output: &out}
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	g, err := s.Start(context.Background(), Join{Args: []string{"load"}})
	if err != nil {
		t.Fatal(err)
	}
	pids := remotePids(t, &out, 1)
	if err := g.Close(0, 200*time.Millisecond); err == nil {
		t.Errorf("Close() = nil, want the kill named")
	}
	waitGone(t, pids, RemoteGrace+time.Minute)
	// The copy is removed once the killed process is reaped on the host.
	deadline := time.Now().Add(time.Minute)
	for len(copiedDirs(t, srv)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("copies left on the host: %v", copiedDirs(t, srv))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSSHBadInput: each mistake is one line naming the host and the fix,
// found by Check, before anything starts.
func TestSSHBadInput(t *testing.T) {
	srv := sshtest.Start(t)
	exe := fakeZkherd(t, t.TempDir(), `exit 0`)
	closed := srv.Options(srv.Key)
	closed[0] = "Port=1" // nothing listens on port 1 of 127.0.0.1
	otherArch := fakeZkherd(t, srv.BinDir, `echo "zkherd 0.9"`)
	_ = otherArch
	tests := []struct {
		name     string
		s        *SSH
		want     string
		wantNone string
	}{
		{"unreachable", &SSH{Hosts: []string{"127.0.0.1"}, Options: closed}, "host 127.0.0.1: ssh connection refused; check sshd runs there and its port (ssh-option Port=N)", ""}, // the command names the flag (e2e TestHostsBadInput)
		{"login refused", &SSH{Hosts: []string{"127.0.0.1"}, Options: srv.Options(srv.OtherKey)}, "host 127.0.0.1: ssh login refused (", "ssh-copy-id 127.0.0.1"},
		{"unknown host key", &SSH{Hosts: []string{"127.0.0.1"}, Options: append([]string{"UserKnownHostsFile=/dev/null"}, srv.Options(srv.Key)...)}, "host 127.0.0.1: its ssh host key is unknown or changed; connect once with ssh 127.0.0.1", ""},
		{"other platform, no zkherd", &SSH{Hosts: []string{"127.0.0.1"}, Options: srv.Options(srv.Key), platform: "linux/riscv64", Version: "1.2.0"}, "host 127.0.0.1 is linux/amd64 and has no zkherd on its PATH, and this binary is linux/riscv64: install zkherd 1.2.0 there", ""},
		{"other platform, other version", &SSH{Hosts: []string{"127.0.0.2"}, Options: srv.Options(srv.Key), platform: "linux/riscv64", Version: "1.2.0"}, "host 127.0.0.2 is linux/amd64 and its zkherd (" + srv.BinDir + "/zkherd) is version 0.9, not 1.2.0: install zkherd 1.2.0 there", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.s.Executable = exe
			err := tt.s.Check(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.wantNone) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Check() = %v\nwant one line with %q", err, tt.want)
			}
		})
	}
	if d := copiedDirs(t, srv); len(d) > 0 {
		t.Errorf("copies left on the host: %v", d)
	}
}
