package inspect

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// kazoo is one python3-kazoo client running a recipe
// (testdata/foreign/kazoo_recipe.py) until the test ends.
func kazoo(t *testing.T, servers []string, recipe, path string) {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "testdata/foreign/kazoo_recipe.py", strings.Join(servers, ","), recipe, path)
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
		t.Fatalf("start kazoo (python3-kazoo, /usr/bin/python3): %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		line <- s.Text()
		for s.Scan() {
		}
	}()
	select {
	case l := <-line:
		if l != "OK" {
			t.Fatalf("kazoo %s %s: %q, stderr:\n%s", recipe, path, l, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("kazoo %s %s did not start; stderr:\n%s", recipe, path, stderr.String())
	}
}

// waitChildren waits until dir has n children (the foreign clients'
// nodes are created in their own time).
func waitChildren(t *testing.T, servers []string, dir string, n int) []string {
	t.Helper()
	c := connect(t, servers)
	deadline := time.Now().Add(30 * time.Second)
	for {
		names, _, err := c.Children(dir)
		if err == nil && len(names) >= n {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has children %v (%v), want %d", dir, names, err, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
