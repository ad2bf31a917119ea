package ensemble

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

var (
	// ErrZooKeeperNotFound means no usable Apache ZooKeeper installation was found.
	// Its message carries the install command, so callers can print it as is.
	ErrZooKeeperNotFound = errors.New("ensemble: Apache ZooKeeper not found; install it: " +
		"apt-get install zookeeper (Debian/Ubuntu) or brew install zookeeper (macOS)")
	// ErrJavaNotFound means no Java runtime was found to run ZooKeeper with.
	ErrJavaNotFound = errors.New("ensemble: Java not found; install it: " +
		"apt-get install default-jre-headless (Debian/Ubuntu) or brew install openjdk (macOS)")
)

// debianJavaDir is where Debian's zookeeper package and its dependencies put their jars.
const debianJavaDir = "/usr/share/java"

// Installation is a ZooKeeper installation and the Java runtime to run it with.
type Installation struct {
	// Source says how it was found: "ZOOKEEPER_HOME", "debian" or "PATH".
	Source string
	// Home is the ZooKeeper home directory (debianJavaDir for the Debian package).
	Home string
	// ClassPath lists the jars a server needs, in order.
	ClassPath []string
	// Java is the java executable.
	Java string
	// AdminServer reports whether Jetty and the servlet API are on ClassPath,
	// so the HTTP AdminServer can start. When false it is disabled in zoo.cfg.
	AdminServer bool
}

// Find locates ZooKeeper and Java.
//
// ZooKeeper: $ZOOKEEPER_HOME when set (and then only there, so a wrong value
// is reported rather than silently replaced), else Debian's package in
// /usr/share/java, else the home of zkServer.sh (or Homebrew's zkServer) on PATH.
// Java: $JAVA_HOME/bin/java when JAVA_HOME is set (and then only there), else
// java on PATH, else /usr/bin/java.
//
// Find only checks that the files exist; Start proves they work.
func Find() (Installation, error) {
	inst, err := findZooKeeper()
	if err != nil {
		return Installation{}, err
	}
	inst.Java, err = findJava()
	if err != nil {
		return Installation{}, err
	}
	return inst, nil
}

func findZooKeeper() (Installation, error) {
	if home := os.Getenv("ZOOKEEPER_HOME"); home != "" {
		inst, ok := fromHome(home)
		if !ok {
			return Installation{}, fmt.Errorf("%w (ZOOKEEPER_HOME=%s holds no zookeeper-<version>.jar in lib/)",
				ErrZooKeeperNotFound, home)
		}
		inst.Source = "ZOOKEEPER_HOME"
		return inst, nil
	}
	if inst, ok := fromDebian(debianJavaDir); ok {
		return inst, nil
	}
	for _, script := range []string{"zkServer.sh", "zkServer"} {
		path, err := exec.LookPath(script)
		if err != nil {
			continue
		}
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			path = resolved
		}
		home := filepath.Dir(filepath.Dir(path))
		// Homebrew keeps the jars under libexec; some packages under share/zookeeper.
		for _, dir := range []string{home, filepath.Join(home, "libexec"), filepath.Join(home, "share", "zookeeper")} {
			if inst, ok := fromHome(dir); ok {
				inst.Source = "PATH"
				return inst, nil
			}
		}
	}
	return Installation{}, ErrZooKeeperNotFound
}

// fromHome reads an Apache binary-release layout: the server jar and all its
// dependencies (logging, Jetty, Netty) sit in lib/.
func fromHome(home string) (Installation, bool) {
	var jars []string
	for _, pattern := range []string{filepath.Join(home, "lib", "*.jar"), filepath.Join(home, "*.jar")} {
		m, _ := filepath.Glob(pattern) // only ErrBadPattern, impossible here
		jars = append(jars, m...)
	}
	if !slices.ContainsFunc(jars, isServerJar) {
		return Installation{}, false
	}
	names := make([]string, len(jars))
	for i, j := range jars {
		names[i] = filepath.Base(j)
	}
	hasJetty := slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "jetty-server") })
	hasServlet := slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "servlet-api") })
	return Installation{Home: home, ClassPath: jars, AdminServer: hasJetty && hasServlet}, true
}

// isServerJar matches zookeeper-3.8.4.jar but not zookeeper-jute-3.8.4.jar.
func isServerJar(path string) bool {
	name := filepath.Base(path)
	rest, ok := strings.CutPrefix(name, "zookeeper-")
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' && strings.HasSuffix(name, ".jar")
}

// fromDebian uses Debian's zookeeper package. zookeeper.jar's manifest
// Class-Path pulls in its dependencies, but not the servlet API that Jetty
// needs (without it the AdminServer logs "Unable to load jetty"), any SLF4J
// binding (without one the server logs nothing) nor all of Netty, so add them.
func fromDebian(dir string) (Installation, bool) {
	zk := filepath.Join(dir, "zookeeper.jar")
	if !exists(zk) {
		return Installation{}, false
	}
	cp := []string{zk}
	servlet := filepath.Join(dir, "servlet-api.jar")
	if exists(servlet) {
		cp = append(cp, servlet)
	}
	if logger := filepath.Join(dir, "slf4j-simple.jar"); exists(logger) {
		cp = append(cp, logger)
	}
	// The manifest lists Netty's handler and transport but not the codec
	// and resolver they need: without them the Netty connection factory
	// (and so TLS, Options.TLS) cannot start.
	for _, jar := range []string{"netty-codec.jar", "netty-resolver.jar"} {
		if p := filepath.Join(dir, jar); exists(p) {
			cp = append(cp, p)
		}
	}
	admin := exists(servlet) && exists(filepath.Join(dir, "jetty9-server.jar")) &&
		exists(filepath.Join(dir, "jetty9-servlet.jar"))
	return Installation{Source: "debian", Home: dir, ClassPath: cp, AdminServer: admin}, true
}

func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java := filepath.Join(home, "bin", "java")
		if !isExecutable(java) {
			return "", fmt.Errorf("%w (JAVA_HOME=%s has no bin/java)", ErrJavaNotFound, home)
		}
		return java, nil
	}
	if java, err := exec.LookPath("java"); err == nil {
		return java, nil
	}
	if isExecutable("/usr/bin/java") {
		return "/usr/bin/java", nil
	}
	return "", ErrJavaNotFound
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
