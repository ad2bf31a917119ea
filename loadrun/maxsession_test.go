package loadrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/scenarios"
)

// TestScenarioServerMaxSessionTimeout: a scenario's
// server_max_session_timeout configures the local ensemble Open starts,
// and is refused with servers given (they keep their own).
func TestScenarioServerMaxSessionTimeout(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "short.yaml")
	yaml := "name: short\nrecipe: fair-lock\nclients: 2\nduration: 2s\nsession_timeout: 10s\nserver_max_session_timeout: 2s\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(file, scenarios.Overrides{}, "")
	if err != nil {
		t.Fatalf("NewPlan: %v", err)
	}

	_, err = Target{Server: connstr.ConnectString{Servers: []string{"127.0.0.1:1"}}, Log: &bytes.Buffer{}}.Open(context.Background(), plan, 2)
	if err == nil || !strings.Contains(err.Error(), "server_max_session_timeout") {
		t.Errorf("Open with servers given: %v, want server_max_session_timeout refused", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, err := Target{Log: &bytes.Buffer{}}.Open(ctx, plan, 2)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer env.Close()
	cfg, err := os.ReadFile(env.ens.Members()[0].ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "\nmaxSessionTimeout=2000\n") {
		t.Errorf("zoo.cfg of the local ensemble lacks maxSessionTimeout=2000:\n%s", cfg)
	}
}
