package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/zkherd/zkherd/cluster"
	"github.com/zkherd/zkherd/ensemble"
)

// TestScripts runs the end-to-end tests of the commands a user types:
// each testdata/script/*.txtar runs "exec zkherd ..." (checkedBin, on the
// script's PATH) as a real subprocess and checks its output and exit code.
func TestScripts(t *testing.T) {
	t.Parallel() // each script enters commandLane (Setup)
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
			// znode SERVER PATH: PATH exists on SERVER (with !, it does not).
			"znode": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: znode SERVER PATH")
				}
				conn, _, err := zk.Connect(strings.Split(args[0], ","), 10*time.Second, zk.WithLogInfo(false))
				ts.Check(err)
				defer conn.Close()
				ok, _, err := conn.Exists(args[1])
				ts.Check(err)
				if ok == neg {
					ts.Fatalf("znode %s exists: %v", args[1], ok)
				}
			},
			// jsonhas FILE PATH[=VALUE]...: FILE parses as JSON and holds
			// each PATH (keys and array indices joined by dots, such as
			// members.0.mode), not null; with =VALUE, the value's JSON
			// (a string without its quotes) is VALUE.
			"jsonhas": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 || neg {
					ts.Fatalf("usage: jsonhas FILE PATH[=VALUE]...")
				}
				var doc any
				if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc); err != nil {
					ts.Fatalf("%s does not parse as JSON: %v", args[0], err)
				}
				for _, arg := range args[1:] {
					p, want, check := strings.Cut(arg, "=")
					v, err := jsonPath(doc, p)
					if err != nil {
						ts.Fatalf("%s: %v", args[0], err)
					}
					if !check {
						continue
					}
					got := fmt.Sprint(v)
					if b, err := json.Marshal(v); err == nil {
						if _, isString := v.(string); !isString {
							got = string(b)
						}
					}
					if got != want {
						ts.Fatalf("%s: %s is %s, want %s", args[0], p, got, want)
					}
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
			commandLane.enter()
			env.Defer(commandLane.leave)
			// zkherd first, then the user's install locations (ZooKeeper,
			// Java).
			bin, err := checkedBuild.get()
			if err != nil {
				return err
			}
			env.Setenv("PATH", filepath.Dir(bin)+string(filepath.ListSeparator)+os.Getenv("PATH"))
			return nil
		},
	})
}

// jsonPath follows a dotted path of keys and array indices in a decoded
// JSON document; a missing or null value is an error.
func jsonPath(doc any, path string) (any, error) {
	v := doc
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[part]
			if !ok {
				return nil, fmt.Errorf("%s: no %q (keys: %v)", path, part, slices.Sorted(maps.Keys(x)))
			}
			v = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("%s: %q is not an index of an array of %d", path, part, len(x))
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%s: %q asked of %T", path, part, v)
		}
		if v == nil {
			return nil, fmt.Errorf("%s: null", path)
		}
	}
	return v, nil
}
