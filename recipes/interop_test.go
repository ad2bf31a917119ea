package recipes

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// curatorJars is the class path of the Java side: Debian's
// libcurator-recipes-java and its dependencies.
var curatorJars = []string{
	"curator-framework", "curator-client", "curator-recipes",
	"zookeeper", "zookeeper-jute", "slf4j-api", "slf4j-nop", "guava",
}

// curatorLock drives testdata/interop/CuratorLock.java: one Curator
// InterProcessMutex in a JVM, commanded line by line.
type curatorLock struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string // closed when the JVM's stdout ends
	session int64
}

func startCuratorLock(t *testing.T, connect, path string) *curatorLock {
	t.Helper()
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: the interop test needs a JDK (Debian: openjdk-17-jdk-headless) and libcurator-recipes-java", tool)
		}
	}
	var cp []string
	for _, j := range curatorJars {
		cp = append(cp, filepath.Join("/usr/share/java", j+".jar"))
	}
	classes := t.TempDir()
	src, err := filepath.Abs("testdata/interop/CuratorLock.java")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("javac", "-d", classes, "-cp", strings.Join(cp, ":"), src).CombinedOutput(); err != nil {
		t.Fatalf("javac CuratorLock.java: %v\n%s\n(are Debian's libcurator-recipes-java jars in /usr/share/java?)", err, out)
	}
	cmd := exec.Command("java", "-Xmx64m", "-cp", strings.Join(append(cp, classes), ":"), "CuratorLock", connect, path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	j := &curatorLock{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(j.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			j.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close() // the program exits at the end of its input
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		for range j.lines {
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("CuratorLock stderr:\n%s", stderr.String())
		}
	})
	ready := j.next(60 * time.Second)
	id, ok := strings.CutPrefix(ready, "READY ")
	if !ok {
		t.Fatalf("CuratorLock said %q, want READY <session id>", ready)
	}
	if j.session, err = strconv.ParseInt(id, 10, 64); err != nil {
		t.Fatalf("CuratorLock session id %q: %v", id, err)
	}
	return j
}

func (j *curatorLock) send(command string) {
	j.t.Helper()
	if _, err := io.WriteString(j.stdin, command+"\n"); err != nil {
		j.t.Fatalf("CuratorLock %q: %v", command, err)
	}
}

// next returns the next line, failing the test after limit.
func (j *curatorLock) next(limit time.Duration) string {
	j.t.Helper()
	select {
	case line, ok := <-j.lines:
		if !ok {
			j.t.Fatalf("CuratorLock exited")
		}
		return line
	case <-time.After(limit):
		j.t.Fatalf("CuratorLock silent for %v", limit)
	}
	return ""
}

func (j *curatorLock) expect(want string) {
	j.t.Helper()
	if got := j.next(30 * time.Second); got != want {
		j.t.Fatalf("CuratorLock said %q, want %q", got, want)
	}
}

// TestCuratorInterop is issue 3 item 15: Curator's InterProcessMutex in a
// JVM and a zkherd Lock on the same path exclude each other in both
// orders, and the layout parser reads the Java nodes.
func TestCuratorInterop(t *testing.T) {
	servers := sharedServers(t)
	path := testPath(t)
	s := newTestSession(t, servers)
	ctx := testCtx(t, 120*time.Second)
	java := startCuratorLock(t, strings.Join(servers, ","), path)
	l := NewLock(s, path)

	// checkLayout parses the directory: every node is a Curator mutex node,
	// and the Java session owns one of them.
	checkLayout := func(wantNodes int) {
		t.Helper()
		names := children(t, s, path)
		nodes, unknown := ParseChildren(names)
		if len(unknown) != 0 || len(nodes) != wantNodes {
			t.Fatalf("children %q: parsed %d nodes, unrecognised %q; want %d nodes, none unrecognised", names, len(nodes), unknown, wantNodes)
		}
		javaNodes := 0
		for _, n := range nodes {
			if n.Layout != LayoutCurator || n.Kind != KindLock {
				t.Errorf("node %s parsed as %s/%s, want %s/%s", n.Name, n.Layout, n.Kind, LayoutCurator, KindLock)
			}
			if ownerOf(t, s, joinPath(path, n.Name)) == java.session {
				javaNodes++
			}
		}
		if javaNodes != 1 {
			t.Errorf("%d nodes owned by the Java session, want 1", javaNodes)
		}
	}

	t.Run("Java holds, Go waits", func(t *testing.T) {
		java.send("acquire")
		java.expect("ACQUIRED")
		if err := l.TryLock(ctx); !errors.Is(err, ErrHeldByOther) {
			t.Fatalf("Go TryLock while Curator holds = %v, want %v", err, ErrHeldByOther)
		}
		done := make(chan error, 1)
		go func() { done <- l.Lock(ctx) }()
		waitFor(t, 10*time.Second, "the Go waiter's node", func() bool { return len(children(t, s, path)) == 2 })
		checkLayout(2)
		select {
		case err := <-done:
			t.Fatalf("Go Lock returned %v while Curator holds", err)
		default:
		}
		java.send("release")
		java.expect("RELEASED")
		if err := <-done; err != nil {
			t.Fatalf("Go Lock after Curator's release = %v", err)
		}
	})

	t.Run("Go holds, Java waits", func(t *testing.T) {
		// Go still holds from the previous subtest.
		if l.Node() == "" {
			t.Fatal("Go lock not held")
		}
		java.send("try 300")
		java.expect("TIMEOUT")
		java.send("acquire")
		waitFor(t, 10*time.Second, "the Java waiter's node", func() bool { return len(children(t, s, path)) == 2 })
		checkLayout(2)
		select {
		case line := <-java.lines:
			t.Fatalf("Curator said %q while Go holds", line)
		default:
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		java.expect("ACQUIRED")
		if err := l.TryLock(ctx); !errors.Is(err, ErrHeldByOther) {
			t.Errorf("Go TryLock while Curator holds = %v, want %v", err, ErrHeldByOther)
		}
		java.send("release")
		java.expect("RELEASED")
	})

	java.send("quit")
	java.expect("BYE")
	if left := children(t, s, path); len(left) != 0 {
		t.Errorf("nodes left: %q", left)
	}
}
