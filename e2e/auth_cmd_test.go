package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/recipes"
)

// TestCredentialSources: digest credentials reach the server from --auth,
// --auth-file (only when the file is private) and ZKHERD_AUTH, so that a
// password need not show in ps (issue 26, finding 7).
func TestCredentialSources(t *testing.T) {
	inLane(t, commandLane)
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := recipes.NewSession(ctx, ens.Servers(), recipes.WithDigestAuth("alice:secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Conn().Create("/private", []byte("for alice"), 0, zk.DigestACL(zk.PermAll, "alice", "secret")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("alice:secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	private, shared := file("private", 0o600), file("shared", 0o640)
	export := []string{"export", "/private", "--server", ens.ConnectString()}
	tests := []struct {
		name     string
		args     []string
		env      string
		wantCode int
		want     string // in stdout when exit 0, else in stderr
	}{
		{"--auth", append(export, "--auth", "alice:secret"), "", exit.OK, `"data": "for alice"`},
		{"--auth-file", append(export, "--auth-file", private), "", exit.OK, `"data": "for alice"`},
		{"ZKHERD_AUTH", export, "alice:secret", exit.OK, `"data": "for alice"`},
		{"--auth wins over ZKHERD_AUTH", append(export, "--auth", "alice:secret"), "alice:wrong", exit.OK, `"data": "for alice"`},
		{"no credentials", export, "", exit.Usage, "give --auth"},
		{"--auth-file others may read", append(export, "--auth-file", shared), "", exit.Usage, "chmod 600"},
		{"--auth and --auth-file", append(export, "--auth", "alice:secret", "--auth-file", private), "", exit.Usage, "both given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, e, err := runZkherdEnv(t.Context(), []string{"ZKHERD_AUTH=" + tt.env}, checkedBin(t), tt.args...)
			code := exitCode(err)
			got := o
			if tt.wantCode != exit.OK {
				got = e
			}
			if code != tt.wantCode || !strings.Contains(got, tt.want) {
				t.Fatalf("exit %d, want %d with %q; stdout %s stderr %s", code, tt.wantCode, tt.want, o, e)
			}
			if strings.Contains(e, "secret") {
				t.Errorf("stderr shows the password: %s", e)
			}
		})
	}
}
