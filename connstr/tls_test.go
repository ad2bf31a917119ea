package connstr

import (
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   TLS
	}{
		{"missing CA", TLS{CA: filepath.Join(dir, "none.pem")}},
		{"CA not PEM", TLS{CA: notPEM}},
		{"cert without key", TLS{Cert: notPEM}},
		{"key without cert", TLS{Key: notPEM}},
		{"bad pair", TLS{Cert: notPEM, Key: notPEM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.in.Config()
			if !errors.Is(err, ErrTLSConfig) || cfg != nil {
				t.Errorf("Config() = %v, %v; want ErrTLSConfig", cfg, err)
			}
		})
	}
	if cfg, err := (TLS{}).Config(); cfg != nil || err != nil {
		t.Errorf("zero TLS: Config() = %v, %v; want nil, nil (plain TCP)", cfg, err)
	}
	if cfg, err := (TLS{ServerName: "zk"}).Config(); err != nil || cfg == nil || cfg.ServerName != "zk" {
		t.Errorf("server name only: Config() = %v, %v; want TLS with the system roots", cfg, err)
	}
}

func TestForServer(t *testing.T) {
	base := &tls.Config{}
	if got := ForServer(base, "10.0.0.1:2281").ServerName; got != "10.0.0.1" {
		t.Errorf("ServerName = %q, want the host of the address", got)
	}
	if base.ServerName != "" {
		t.Errorf("ForServer modified its argument")
	}
	named := &tls.Config{ServerName: "zk.example"}
	if got := ForServer(named, "10.0.0.1:2281").ServerName; got != "zk.example" {
		t.Errorf("ServerName = %q, want the configured name", got)
	}
}
