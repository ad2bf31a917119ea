package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/launch/sshtest"
)

// joinersOf lists the zkherd processes whose command line joins run id:
// those a starter launched, wherever they run on this machine (not the
// shells that run them over ssh; zombies, whose command line is empty,
// are gone already).
func joinersOf(t *testing.T, id string) []int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("\x00--join\x00" + id + "\x00")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		exe, _ := os.Readlink(filepath.Join("/proc", d.Name(), "exe"))
		if err == nil && bytes.Contains(cmdline, want) && filepath.Base(exe) == "zkherd" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitNoJoiners waits until no process joins run id, or fails after bound.
func waitNoJoiners(t *testing.T, id string, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		pids := joinersOf(t, id)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes joining run %s still running %v later: %v", id, bound, pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lineRecorder collects a command's output lines and says when one
// matching a condition has come.
type lineRecorder struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func recordLines(r io.Reader) *lineRecorder {
	lr := &lineRecorder{done: make(chan struct{})}
	go func() {
		defer close(lr.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			lr.mu.Lock()
			lr.lines = append(lr.lines, sc.Text())
			lr.mu.Unlock()
		}
	}()
	return lr
}

func (lr *lineRecorder) text() string {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return strings.Join(lr.lines, "\n")
}

// waitFor waits until every condition holds for some line, or the
// output ends (false).
func (lr *lineRecorder) waitFor(ctx context.Context, conds ...func(string) bool) bool {
	for {
		lr.mu.Lock()
		all := true
		for _, c := range conds {
			found := false
			for _, l := range lr.lines {
				if c(l) {
					found = true
					break
				}
			}
			all = all && found
		}
		lr.mu.Unlock()
		if all {
			return true
		}
		select {
		case <-lr.done:
			return false
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// running is a progress line of the process prefix ("" for the starter)
// with operations counted.
func running(prefix string) func(string) bool {
	return func(l string) bool {
		rest, ok := strings.CutPrefix(l, prefix)
		return ok && strings.Contains(rest, "running") && !strings.Contains(rest, "ops 0 ")
	}
}

// TestSpawnThreeProcesses is "zkherd load --spawn 3": the starter starts
// two joining processes itself, streams their output with a prefix, and
// writes the merged report of the three; none is left when it exits.
func TestSpawnThreeProcesses(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	out := filepath.Join(t.TempDir(), "report")
	id := fmt.Sprintf("spawn3-%d", os.Getpid())

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "load", "--scenario", "fair-lock", "--clients", "4", "--duration", "2s",
		"--spawn", "3", "--run-id", id, "--server", ens.ConnectString(), "--no-tui", "--out", out)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zkherd load --spawn 3: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	// Reaped before the starter exits: nothing to wait for.
	if pids := joinersOf(t, id); len(pids) > 0 {
		t.Errorf("joining processes left after the starter exited: %v", pids)
	}
	for _, want := range []string{"[process 2] joined run " + id, "[process 3] joined run " + id, "[process 2] RESULT: PASS", "[process 3] RESULT: PASS"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr has no %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "fair-lock, 3 processes") || !strings.Contains(stdout.String(), "RESULT: PASS") {
		t.Errorf("summary:\n%s\nwant the merged run of 3 processes, passed", stdout.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Title     string `json:"title"`
		Scenarios []struct {
			Clients    int      `json:"clients"`
			Operations int64    `json:"operations"`
			Notes      []string `json:"notes"`
			Checks     struct {
				Passed bool `json:"passed"`
			} `json:"checks"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Title != "fair-lock, 3 processes" || len(rep.Scenarios) != 1 {
		t.Fatalf("report.json title %q, %d scenarios; want fair-lock over 3 processes", rep.Title, len(rep.Scenarios))
	}
	s := rep.Scenarios[0]
	if s.Clients != 12 || s.Operations == 0 || !s.Checks.Passed {
		t.Errorf("merged scenario: %d clients, %d operations, passed %v; want 12 clients (4 in each of 3 processes), operations, passed", s.Clients, s.Operations, s.Checks.Passed)
	}
	for p := range 3 {
		if !strings.Contains(strings.Join(s.Notes, "\n"), fmt.Sprintf("process %d:", p)) {
			t.Errorf("notes %q: nothing from process %d", s.Notes, p)
		}
	}
}

// TestSpawnInterrupted is Ctrl-C (SIGINT to the starter alone, as the
// launched processes have process groups of their own) while a spawned
// run goes: the starter stops its processes and exits only once none is
// left.
func TestSpawnInterrupted(t *testing.T) {
	inLane(t, commandLane)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			bin := zkherdBin(t)
			ens := enstest.Start(t, 1)
			id := fmt.Sprintf("spawnint-%d-%d", os.Getpid(), sig)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "load", "--scenario", "fair-lock", "--clients", "4", "--duration", "2m",
				"--spawn", "3", "--run-id", id, "--server", ens.ConnectString(), "--no-tui", "--out", filepath.Join(t.TempDir(), "report"))
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := recordLines(stderr)
			if !lines.waitFor(ctx, running("[process 2] "), running("[process 3] ")) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the spawned processes never ran:\n%s", lines.text())
			}
			if n := len(joinersOf(t, id)); n != 2 {
				t.Errorf("%d processes join the run while it goes, want 2", n)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-lines.done
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exit.Interrupted {
				t.Errorf("exit: %v, want status %d\n%s", err, exit.Interrupted, lines.text())
			}
			if pids := joinersOf(t, id); len(pids) > 0 {
				t.Errorf("the starter exited and left processes joining its run: %v\n%s", pids, lines.text())
			}
		})
	}
}

// TestSpawnStarterKilled is a starter killed with SIGKILL, which cannot
// stop anything: its launched processes get SIGTERM from the kernel (the
// parent-death signal) and stop on their own.
func TestSpawnStarterKilled(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	id := fmt.Sprintf("spawnkill-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "load", "--scenario", "fair-lock", "--clients", "4", "--duration", "2m",
		"--spawn", "3", "--run-id", id, "--server", ens.ConnectString(), "--no-tui", "--out", filepath.Join(t.TempDir(), "report"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := recordLines(stderr)
	if !lines.waitFor(ctx, running("[process 2] "), running("[process 3] ")) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the spawned processes never ran:\n%s", lines.text())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// They stop gracefully: within the grace a joiner takes to publish
	// and clean up, bounded generously for a loaded machine.
	waitNoJoiners(t, id, 90*time.Second)
}

// copyFile copies the binary src to dst, executable.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestHostsRun is "zkherd load --hosts 127.0.0.1,127.0.0.2" against a
// real sshd on loopback: a process on each host, the binary copied to
// the one without it and taken from the PATH of the other, output
// streamed with the host's prefix, the merged report of three processes,
// nothing left on the hosts.
func TestHostsRun(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	srv := sshtest.Start(t)
	copyFile(t, bin, filepath.Join(srv.BinDir, "zkherd")) // installed on 127.0.0.2
	ens := enstest.Start(t, 1)
	out := filepath.Join(t.TempDir(), "report")
	id := fmt.Sprintf("hosts-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"load", "--scenario", "fair-lock", "--clients", "3", "--duration", "2s", "--hosts", strings.Join(sshtest.Hosts, ","),
		"--run-id", id, "--server", ens.ConnectString(), "--no-tui", "--out", out}
	for _, o := range srv.Options(srv.Key) {
		args = append(args, "--ssh-option", o)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zkherd load --hosts: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if pids := joinersOf(t, id); len(pids) > 0 {
		t.Errorf("processes joining the run left after the starter exited: %v", pids)
	}
	for _, want := range []string{
		"[127.0.0.1] copied this zkherd to " + srv.TmpDir, "[127.0.0.2] running " + srv.BinDir + "/zkherd (on the host's PATH)",
		"[127.0.0.1] joined run " + id, "[127.0.0.2] joined run " + id, "[127.0.0.1] RESULT: PASS", "[127.0.0.2] RESULT: PASS",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr has no %q:\n%s", want, stderr.String())
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Title     string `json:"title"`
		Scenarios []struct {
			Clients int `json:"clients"`
			Checks  struct {
				Passed bool `json:"passed"`
			} `json:"checks"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Title != "fair-lock, 3 processes" || len(rep.Scenarios) != 1 || rep.Scenarios[0].Clients != 9 || !rep.Scenarios[0].Checks.Passed {
		t.Errorf("report.json: %q %+v, want fair-lock over 3 processes, 9 clients, passed", rep.Title, rep.Scenarios)
	}
	if m, _ := filepath.Glob(filepath.Join(srv.TmpDir, "zkherd.*")); len(m) > 0 {
		t.Errorf("copies left on the host: %v", m)
	}
}

// TestHostsInterrupted is Ctrl-C at the starter of a --hosts run: the
// processes on the hosts stop, and none is left once the starter exits.
func TestHostsInterrupted(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	srv := sshtest.Start(t)
	ens := enstest.Start(t, 1)
	id := fmt.Sprintf("hostsint-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"load", "--scenario", "fair-lock", "--clients", "3", "--duration", "2m", "--hosts", strings.Join(sshtest.Hosts, ","),
		"--run-id", id, "--server", ens.ConnectString(), "--no-tui", "--out", filepath.Join(t.TempDir(), "report")}
	for _, o := range srv.Options(srv.Key) {
		args = append(args, "--ssh-option", o)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := recordLines(stderr)
	if !lines.waitFor(ctx, running("[127.0.0.1] "), running("[127.0.0.2] ")) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the processes on the hosts never ran:\n%s", lines.text())
	}
	if n := len(joinersOf(t, id)); n != 2 {
		t.Errorf("%d processes join the run while it goes, want 2", n)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-lines.done
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exit.Interrupted {
		t.Errorf("exit: %v, want status %d\n%s", err, exit.Interrupted, lines.text())
	}
	if pids := joinersOf(t, id); len(pids) > 0 {
		t.Errorf("the starter exited and left processes joining its run on the hosts: %v\n%s", pids, lines.text())
	}
	if m, _ := filepath.Glob(filepath.Join(srv.TmpDir, "zkherd.*")); len(m) > 0 {
		t.Errorf("copies left on the hosts: %v", m)
	}
}

// TestHostsBadInput: a host ssh cannot reach, and --hosts without
// --server, are one line each naming the fix (exit 2), and nothing is
// started or written: no run on the servers, no process.
func TestHostsBadInput(t *testing.T) {
	inLane(t, commandLane)
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"closed port", []string{"--hosts", "127.0.0.1", "--ssh-option", "Port=1", "--server", ens.ConnectString()},
			"host 127.0.0.1: ssh connection refused; check sshd runs there and its port (--ssh-option Port=N)"},
		{"no server", []string{"--hosts", "127.0.0.1"}, "--hosts needs --server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report")
			_, stderr, err := runZkherd(ctx, checkedBin(t), append([]string{"load", "--scenario", "fair-lock", "--clients", "2", "--duration", "1s", "--no-tui", "--out", out}, tt.args...)...)
			if exitCode(err) != exit.Usage || !strings.Contains(stderr, tt.want) || strings.Contains(strings.TrimSpace(stderr), "\n") {
				t.Errorf("error %v (stderr %q), want exit 2 and one line with %q", err, stderr, tt.want)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Errorf("%s written", out)
			}
		})
	}
	conn, _, err := zk.Connect(ens.Servers(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if runs, _, err := conn.Children("/zkherd/runs"); err == nil && len(runs) > 0 {
		t.Errorf("runs left on the servers: %v", runs)
	}
}

// TestIndexedProcesses runs three processes the way a Kubernetes Indexed
// Job does: the same arguments, --index 0..2; those numbered 1 and 2
// start first and wait for the run that 0 starts, then join it.
func TestIndexedProcesses(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	out := filepath.Join(t.TempDir(), "report")
	id := fmt.Sprintf("indexed-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := func(i int) []string {
		return []string{"load", "--scenario", "fair-lock", "--clients", "3", "--duration", "2s", "--processes", "3", "--run-id", id,
			"--index", strconv.Itoa(i), "--server", ens.ConnectString(), "--no-tui", "--out", out}
	}
	type proc struct {
		cmd   *exec.Cmd
		lines *lineRecorder
		out   bytes.Buffer
	}
	start := func(i int) *proc {
		p := &proc{cmd: exec.CommandContext(ctx, bin, args(i)...)}
		p.cmd.Stdout = &p.out
		stderr, err := p.cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p.lines = recordLines(stderr)
		return p
	}
	var procs []*proc
	for i := 1; i < 3; i++ {
		p := start(i)
		procs = append(procs, p)
		if !p.lines.waitFor(ctx, func(l string) bool { return strings.Contains(l, "run "+id+" is not started yet; waiting") }) {
			t.Fatalf("process %d did not wait for the run:\n%s", i, p.lines.text())
		}
	}
	procs = append(procs, start(0))
	for i, p := range procs {
		<-p.lines.done
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, p.lines.text())
		}
	}
	if got := procs[2].out.String(); !strings.Contains(got, "fair-lock, 3 processes") || !strings.Contains(got, "RESULT: PASS") {
		t.Errorf("process 0's summary:\n%s\nwant the merged run of 3 processes, passed", got)
	}
	for _, p := range procs[:2] {
		if !strings.Contains(p.out.String(), "results published") {
			t.Errorf("a joining process said:\n%s\nwant its results published", p.out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "report.json")); err != nil {
		t.Errorf("no merged report: %v", err)
	}
}

// TestSpawnChildEndsBeforeJoining is a launched process that ends before
// the run starts (killed at once here): the starter, which saw it end,
// stops waiting for it at once with one line naming it, rather than
// after the join timeout, and leaves no process behind.
func TestSpawnChildEndsBeforeJoining(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	id := fmt.Sprintf("spawnearly-%d", os.Getpid())
	// Well under the join timeout: a starter that waited for it fails.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "load", "--scenario", "fair-lock", "--clients", "4", "--duration", "5s",
		"--spawn", "3", "--run-id", id, "--join-timeout", "10m", "--server", ens.ConnectString(), "--no-tui",
		"--out", filepath.Join(t.TempDir(), "report"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := recordLines(stderr)
	var pids []int
	for len(pids) < 2 && ctx.Err() == nil {
		pids = joinersOf(t, id)
		time.Sleep(10 * time.Millisecond)
	}
	if len(pids) < 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the launched processes never appeared:\n%s", lines.text())
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-lines.done
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the starter still waited %v after a launched process ended:\n%s", 2*time.Minute, lines.text())
	}
	// A failed run stops the other launched processes at once; only a
	// completed one gives them 30 s (loadrun's joinersFinish) to print
	// their summaries. Before, the starter took that time here too, and
	// the other process, which ran nothing, said "RESULT: PASS".
	if took := time.Since(killed); took >= 25*time.Second {
		t.Errorf("the starter took %v to stop the other processes, want them stopped at once:\n%s", took.Round(time.Second), lines.text())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Errorf("exit: %v, want a failure\n%s", err, lines.text())
	}
	text := lines.text()
	if strings.Contains(text, "RESULT: PASS") {
		t.Errorf("a process that ran nothing said it passed:\n%s", text)
	}
	if !strings.Contains(text, "signal: killed before every process arrived; stopped waiting for it") {
		t.Errorf("stderr:\n%s\nwant one line naming the process that ended before the run started", text)
	}
	if pids := joinersOf(t, id); len(pids) > 0 {
		t.Errorf("processes joining run %s left after the starter exited: %v", id, pids)
	}
}
