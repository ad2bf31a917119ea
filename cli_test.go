package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// End-to-end tests of the commands a user types: each testdata/script/*.txtar
// runs "zkherd ..." as a real subprocess and checks its output and exit code.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"zkherd": func() { os.Exit(run(os.Args[1:])) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// Keep the user's install locations visible (ZooKeeper, Java).
			env.Setenv("PATH", os.Getenv("PATH"))
			return nil
		},
	})
}
