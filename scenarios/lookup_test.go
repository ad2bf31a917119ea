package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(file, []byte("recipe: semaphore\nclients: 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("recipe: semaphore\nclients: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		arg      string
		wantName string
		wantErr  []string // substrings
		wantIs   error
	}{
		{name: "built-in", arg: "fair-lock", wantName: "fair-lock"},
		{name: "file", arg: file, wantName: "mine"},
		{name: "bad file", arg: bad, wantErr: []string{bad + ":2:10: clients: must be at least 1, got 0"}, wantIs: ErrInvalid},
		{name: "missing file", arg: filepath.Join(dir, "nope.yaml"), wantErr: []string{"nope.yaml", "no such file"}, wantIs: os.ErrNotExist},
		{
			name:    "unknown name",
			arg:     "fair-lok",
			wantErr: []string{`unknown scenario "fair-lok" (did you mean "fair-lock"?)`, "built-in scenarios are barrier, election-adversary, election-chaos,", "herd-vs-fair,", "or give the path of a YAML file"},
			wantIs:  ErrUnknown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Lookup(tt.arg)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Lookup(%q): %v", tt.arg, err)
				}
				if s.Name != tt.wantName {
					t.Errorf("Lookup(%q).Name = %q, want %q", tt.arg, s.Name, tt.wantName)
				}
				return
			}
			if err == nil {
				t.Fatalf("Lookup(%q) = nil error, want %q", tt.arg, tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Lookup(%q) error %q does not contain %q", tt.arg, err, w)
				}
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
		})
	}
}

func TestLookupPrefersBuiltinOverFileInWorkingDir(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("queue", []byte("recipe: fair-lock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("custom", []byte("recipe: fair-lock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Lookup("queue"); err != nil || s.Recipe != Queue {
		t.Errorf("Lookup(queue) = %s, %v; want the built-in queue", s.Recipe, err)
	}
	if s, err := Lookup("custom"); err != nil || s.Name != "custom" || s.Recipe != FairLock {
		t.Errorf("Lookup(custom) = %q %s, %v; want the file", s.Name, s.Recipe, err)
	}
}
