package bookmarks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStoreLastsAcrossSessions: bookmarks go to the user's configuration
// directory and are there for the next session; removing one saves too.
func TestStoreLastsAcrossSessions(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	s := Open()
	if want := filepath.Join(home, "config", "zkherd", "bookmarks"); s.File() != want {
		t.Fatalf("file = %q, want %q", s.File(), want)
	}
	for _, p := range []string{"/app/config", "/locks/orders", "/app/config/db"} {
		if added, err := s.Toggle(p); !added || err != nil {
			t.Fatalf("Toggle(%s) = %v, %v", p, added, err)
		}
	}
	if added, err := s.Toggle("/locks/orders"); added || err != nil {
		t.Fatalf("second Toggle = %v, %v; want removed", added, err)
	}
	next := Open()
	if got, want := next.Paths(), []string{"/app/config", "/app/config/db"}; !slices.Equal(got, want) || next.Err() != nil {
		t.Errorf("next session's bookmarks = %v (%v), want %v", got, next.Err(), want)
	}
	if left, _ := os.ReadDir(filepath.Dir(s.File())); len(left) != 1 {
		t.Errorf("files in the configuration directory: %v, want the bookmarks only", left)
	}
}

// TestUnreadableFileNotOverwritten: a bookmarks file that cannot be read is
// left as it is, and the user is told why.
func TestUnreadableFileNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bookmarks")
	if err := os.Mkdir(file, 0o700); err != nil { // a directory: unreadable as a file
		t.Fatal(err)
	}
	s := OpenFile(file)
	if s.Err() == nil {
		t.Fatal("no error for an unreadable bookmarks file")
	}
	if _, err := s.Toggle("/x"); err == nil || !strings.Contains(err.Error(), "bookmarks") {
		t.Errorf("Toggle saved over an unreadable file: %v", err)
	}
	if !s.Has("/x") {
		t.Errorf("the bookmark is not kept for the session")
	}
}
