package inspect

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// foreignJars is the class path of ForeignRecipes.java: Debian's
// libcurator-recipes-java, ZooKeeper's recipe jars and their dependencies.
var foreignJars = []string{
	"curator-framework", "curator-client", "curator-recipes", "zookeeper", "zookeeper-jute",
	"slf4j-api", "slf4j-nop", "guava", "zookeeper-recipes-lock", "zookeeper-recipes-queue",
}

// kazoo runs python3-kazoo clients (testdata/foreign/kazoo_recipe.py), one
// session per "recipe=path", started in order, until the test ends.
func kazoo(t *testing.T, servers []string, recipes ...string) {
	t.Helper()
	foreign(t, exec.Command("/usr/bin/python3", append([]string{"testdata/foreign/kazoo_recipe.py", strings.Join(servers, ",")}, recipes...)...))
}

// java runs Curator and ZooKeeper-recipe clients
// (testdata/foreign/ForeignRecipes.java, compiled into classes), one
// session per "recipe=path", in one JVM, until the test ends.
func java(t *testing.T, classes string, servers []string, recipes ...string) {
	t.Helper()
	var cp []string
	for _, j := range foreignJars {
		cp = append(cp, filepath.Join("/usr/share/java", j+".jar"))
	}
	cp = append(cp, classes)
	foreign(t, exec.Command("java", append([]string{"-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", strings.Join(cp, ":"),
		"ForeignRecipes", strings.Join(servers, ",")}, recipes...)...))
}

// compileJava compiles ForeignRecipes.java into a temporary directory.
func compileJava(t *testing.T) string {
	t.Helper()
	var cp []string
	for _, j := range foreignJars {
		cp = append(cp, filepath.Join("/usr/share/java", j+".jar"))
	}
	classes := t.TempDir()
	out, err := exec.Command("javac", "-d", classes, "-cp", strings.Join(cp, ":"), "testdata/foreign/ForeignRecipes.java").CombinedOutput()
	if err != nil {
		t.Fatalf("javac ForeignRecipes.java: %v\n%s\n(the test needs a JDK and Debian's libcurator-recipes-java and zookeeper recipe jars)", err, out)
	}
	return classes
}

// foreign starts cmd, waits for its "OK" and stops it (closing its stdin)
// when the test ends.
func foreign(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
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
		t.Fatalf("start %s: %v", cmd.Path, err)
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
			t.Fatalf("%s: %q, stderr:\n%s", cmd.Args, l, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start; stderr:\n%s", cmd.Args, stderr.String())
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
