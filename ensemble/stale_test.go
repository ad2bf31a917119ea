package ensemble

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// RemoveStale removes the temporary directories of owners that died and
// keeps those of live owners and those it cannot tell.
func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		dir := filepath.Join(tmp, tempPrefix+name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	stale := mk("dead", strconv.Itoa(dead.Process.Pid))
	live := mk("live", strconv.Itoa(os.Getppid()))
	unknown := mk("unknown", "")
	removed, err := RemoveStale()
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	for _, dir := range []string{live, unknown} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: %v, want it kept", dir, err)
		}
	}
}
