package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/zkherd/zkherd/cluster"
	"github.com/zkherd/zkherd/ensemble"
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
			// ensemble VAR: start a 1-node ZooKeeper for the rest of the
			// script, its connect string in $VAR.
			"ensemble": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: ensemble VAR")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				ens, err := ensemble.Start(ctx, ensemble.Options{Nodes: 1, NoFsync: true, Dir: ts.MkAbs("zk-" + args[0])})
				ts.Check(err)
				ts.Defer(func() { ens.Stop() })
				ts.Setenv(args[0], ens.ConnectString())
			},
			// noruns SERVER: fail if any run namespace is left under
			// /zkherd/runs on SERVER.
			"noruns": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: noruns SERVER")
				}
				conn, _, err := zk.Connect(strings.Split(args[0], ","), 10*time.Second, zk.WithLogInfo(false))
				ts.Check(err)
				defer conn.Close()
				runs, _, err := conn.Children("/zkherd/runs")
				if err != nil && !errors.Is(err, zk.ErrNoNode) {
					ts.Fatalf("list /zkherd/runs: %v", err)
				}
				if (len(runs) > 0) != neg {
					ts.Fatalf("runs left under /zkherd/runs: %v", runs)
				}
			},
			// waitcluster VAR: wait (up to 4 minutes: a loaded machine starts JVMs slowly) until the script's
			// background "zkherd cluster up" serves, then put its connect
			// string in $VAR and, for a TLS ensemble, its files in
			// $VAR_CA, $VAR_CERT and $VAR_KEY.
			"waitcluster": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 || neg {
					ts.Fatalf("usage: waitcluster VAR")
				}
				dir := filepath.Join(ts.Getenv("TMPDIR"), fmt.Sprintf("zkherd-%d", os.Getuid()), "clusters")
				for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
					files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
					for _, f := range files {
						data, err := os.ReadFile(f)
						var rec cluster.Record
						if err != nil || json.Unmarshal(data, &rec) != nil {
							continue
						}
						ts.Setenv(args[0], rec.ConnectString())
						if rec.TLS != nil {
							ts.Setenv(args[0]+"_CA", rec.TLS.CA)
							ts.Setenv(args[0]+"_CERT", rec.TLS.Cert)
							ts.Setenv(args[0]+"_KEY", rec.TLS.Key)
						}
						return
					}
				}
				ts.Fatalf("no zkherd cluster up record appeared in %s within 4 minutes", dir)
			},
		},
		Setup: func(env *testscript.Env) error {
			// Keep the user's install locations visible (ZooKeeper, Java).
			env.Setenv("PATH", os.Getenv("PATH"))
			return nil
		},
	})
}
