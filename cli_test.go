package main

import (
	"net"
	"os"
	"strconv"
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
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// listen VAR: hold a loopback port open until the script ends,
			// its number in $VAR (for "port already in use" cases).
			"listen": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: listen VAR")
				}
				l, err := net.Listen("tcp", "127.0.0.1:0")
				ts.Check(err)
				ts.Defer(func() { l.Close() })
				ts.Setenv(args[0], strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
			},
		},
		Setup: func(env *testscript.Env) error {
			// Keep the user's install locations visible (ZooKeeper, Java).
			env.Setenv("PATH", os.Getenv("PATH"))
			return nil
		},
	})
}
