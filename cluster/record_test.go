package cluster_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkherd/zkherd/cluster"
)

// TestRemoveStaleRecords: the record of a "cluster up" whose process is
// gone (SIGKILL, a crash) is removed; a live one's stays, and so does a
// file that is no record.
func TestRemoveStaleRecords(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := cluster.RecordDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(name string, pid int) string {
		t.Helper()
		data, _ := json.Marshal(cluster.Record{PID: pid, Members: []cluster.RecordedMember{{ID: 1, ClientAddr: fmt.Sprintf("127.0.0.1:%d", 2000+pid%1000)}}})
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stale := write("stale.json", dead.Process.Pid)
	live := write("live.json", os.Getpid())
	other := filepath.Join(dir, "notes.json")
	if err := os.WriteFile(other, []byte("not a record"), 0o600); err != nil {
		t.Fatal(err)
	}

	if got := len(cluster.Records()); got != 1 {
		t.Errorf("Records() before = %d records, want 1 (the live one)", got)
	}
	cluster.RemoveStaleRecords()
	for _, tt := range []struct {
		path string
		want bool
	}{{stale, false}, {live, true}, {other, true}} {
		_, err := os.Stat(tt.path)
		if got := err == nil; got != tt.want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(tt.path), got, tt.want)
		}
	}
}
