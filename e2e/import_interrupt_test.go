package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestImportInterrupt (issue 22, finding 6): Ctrl-C in the middle of
// "zkherd import" exits 130 and says how many nodes it wrote of how many,
// how to finish (--overwrite) and how to undo; the import it names then
// finishes the job.
func TestImportInterrupt(t *testing.T) {
	inLane(t, commandLane)
	bin := zkherdBin(t)
	ens := enstest.Start(t, 1)
	const n = 8000
	type node struct {
		Path     string `json:"path"`
		Data     string `json:"data"`
		Encoding string `json:"encoding"`
	}
	doc := struct {
		Format string `json:"format"`
		Root   string `json:"root"`
		Nodes  []node `json:"nodes"`
	}{Format: "zkherd-export/1", Root: "/x", Nodes: []node{{Path: "/x", Encoding: "utf-8"}}}
	for i := range n {
		doc.Nodes = append(doc.Nodes, node{Path: fmt.Sprintf("/x/n%05d", i), Data: "v", Encoding: "utf-8"})
	}
	file := filepath.Join(t.TempDir(), "big.json")
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	conn, _, err := zk.Connect(ens.Servers(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "import", file, "--into", "/big", "--server", ens.ConnectString(), "--connect-timeout", "60s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Ctrl-C once it is writing.
	for {
		_, st, err := conn.Exists("/big")
		if err == nil && st != nil && st.NumChildren > 100 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the import never wrote 100 nodes; stderr %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exit.Interrupted {
		t.Fatalf("exit: %v, want %d; stderr %q", err, exit.Interrupted, stderr.String())
	}
	m := regexp.MustCompile(`^zkherd: interrupted: import into /big wrote (\d+) of (\d+) nodes; to finish, run it again with --overwrite \(zkherd import .* --into /big --overwrite\); to undo, delete /big and everything below it \(it did not exist before\)\n$`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr %q: want how far it got, how to finish and how to undo", stderr.String())
	}
	wrote, _ := strconv.Atoi(m[1])
	if total, _ := strconv.Atoi(m[2]); total != n+1 || wrote < 100 || wrote >= total {
		t.Errorf("wrote %s of %s, want some of %d", m[1], m[2], n+1)
	}
	if _, st, err := conn.Exists("/big"); err != nil || st.NumChildren+1 != int32(wrote) {
		t.Errorf("/big has %d children (%v); the message said %d nodes were written", st.NumChildren, err, wrote)
	}

	// The command it names finishes the job.
	out, err := exec.CommandContext(ctx, bin, "import", file, "--into", "/big", "--overwrite", "--server", ens.ConnectString(), "--connect-timeout", "60s").CombinedOutput()
	if err != nil {
		t.Fatalf("import --overwrite: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("imported %d nodes into /big", n+1)) {
		t.Errorf("import --overwrite said %q", out)
	}
	if _, st, err := conn.Exists("/big"); err != nil || st.NumChildren != n {
		t.Errorf("/big has %d children after --overwrite (%v), want %d", st.NumChildren, err, n)
	}
}
