// Package e2e holds zkherd's end-to-end tests: each one runs the zkherd
// binary as a user does, from outside (a subprocess, a tmux terminal, a
// testscript under testdata/script), against real ZooKeeper ensembles;
// nothing here reaches into package main. The binary is built at most
// twice per test process, on first use (zkherdBin, checkedBin).
// runZkherd runs it to its end, startZkherd in the background,
// newTmuxScreen in a terminal; the tests about signals and output read
// line by line (interrupts, a broken pipe, a lost process) start it with
// os/exec themselves.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// binDir holds the binaries built for this test process; TestMain
// removes it.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	liftParallel()
	dir, err := os.MkdirTemp("", "zkherd-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A build of zkherd, made once on first use: a test run with -run that
// needs no binary builds none.
type build struct {
	once sync.Once
	race bool
	path string
	err  error
}

// plainBuild is zkherd as a user builds it; checkedBuild is the same
// build unless the tests run with -race.
var (
	plainBuild   = &build{}
	checkedBuild = func() *build {
		if raceEnabled {
			return &build{race: true}
		}
		return plainBuild
	}()
)

func (b *build) get() (string, error) {
	b.once.Do(func() {
		name := "plain"
		if b.race {
			name = "race"
		}
		dir := filepath.Join(binDir, name)
		args := []string{"build", "-o", filepath.Join(dir, "zkherd")}
		if b.race {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "github.com/zkherd/zkherd")...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out.String())
			return
		}
		b.path = filepath.Join(dir, "zkherd")
	})
	return b.path, b.err
}

// zkherdBin is the zkherd binary as a user builds it (no race detector):
// the tests whose timing matters (terminals, loads, distributed runs) run
// this one.
func zkherdBin(t testing.TB) string {
	t.Helper()
	path, err := plainBuild.get()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// checkedBin is zkherd built with the race detector when the tests run
// with -race (make test does): the command-line tests, whose commands ran
// inside the race-checked test process before they moved here, keep
// that check.
func checkedBin(t testing.TB) string {
	t.Helper()
	path, err := checkedBuild.get()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// runZkherd runs bin with args to its end, its stdout and stderr
// captured; err is nil for exit status 0, else an *exec.ExitError
// (exitCode reads its status). If ctx ends first, zkherd is interrupted as
// by Ctrl-C, and killed if it has not stopped 30 s later. The environment
// is the test's.
func runZkherd(ctx context.Context, bin string, args ...string) (stdout, stderr string, err error) {
	return runZkherdEnv(ctx, nil, bin, args...)
}

// runZkherdEnv is runZkherd with env (NAME=value, each replacing the
// test's) added to the environment: a test that sets its own variables
// this way, unlike with t.Setenv, runs beside others (lanes_test.go).
func runZkherdEnv(ctx context.Context, env []string, bin string, args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	return o.String(), e.String(), err
}

// exitCode is the exit status of a run that ended with err: 0 for nil,
// -1 for a run that did not exit by itself (not started, or killed).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// startZkherd starts bin with args in the background, its stdout and
// stderr together in a buffer to read after cmd.Wait; it is killed
// when ctx ends, or at the end of the test if still running.
func startZkherd(t *testing.T, ctx context.Context, bin string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out
}
