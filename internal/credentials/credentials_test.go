package credentials

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/internal/exit"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // umask may have narrowed it
			t.Fatal(err)
		}
		return p
	}
	private := write("private", "alice:s3cret\n", 0o600)
	readOnly := write("readonly", "alice:s3cret", 0o400)
	shared := write("shared", "alice:s3cret\n", 0o644)
	empty := write("empty", "\n", 0o600)
	noColon := write("nocolon", "alice\n", 0o600)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvVar {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name    string
		src     Source
		want    string
		wantErr string
	}{
		{"none", Source{Env: env("")}, "", ""},
		{"flag", Source{Flag: "bob:pw", Env: env("alice:s3cret")}, "bob:pw", ""},
		{"env", Source{Env: env("alice:s3cret")}, "alice:s3cret", ""},
		{"file 0600", Source{File: private, Env: env("bob:pw")}, "alice:s3cret", ""},
		{"file 0400", Source{File: readOnly}, "alice:s3cret", ""},
		{"file others may read", Source{File: shared}, "", "chmod 600"},
		{"file missing", Source{File: filepath.Join(dir, "nope")}, "", "no such file"},
		{"file empty", Source{File: empty}, "", "empty"},
		{"file not user:password", Source{File: noColon}, "", "expected user:password"},
		{"env not user:password", Source{Env: env("alice")}, "", "ZKHERD_AUTH: expected user:password"},
		{"flag and file", Source{Flag: "bob:pw", File: private}, "", "both given"},
		{"directory", Source{File: dir}, "", "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.src)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve = %q, %v; want %q, nil", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrBad) {
				t.Fatalf("Resolve error = %v; want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error %q shows the password", err)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("error %q names a flag (the command names the values it names)", err)
			}
			if tt.src.File != "" && tt.src.Flag == "" {
				if got := exit.Text(err, func(in string) string { return "--" + in }); !strings.HasPrefix(got, "--auth-file ") {
					t.Errorf("as the command shows it: %q, want it to start --auth-file", got)
				}
			}
		})
	}
}
