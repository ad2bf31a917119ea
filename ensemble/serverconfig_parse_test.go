package ensemble

import (
	"strings"
	"testing"
	"time"
)

func TestParseServerConfig(t *testing.T) {
	tests := []struct {
		name, in string
		want     ServerConfig
		bad      bool
	}{
		{name: "empty", in: ""},
		{name: "default", in: "default"},
		{name: "skip acl", in: "skip-acl", want: ServerConfig{SkipACL: true}},
		{name: "digest", in: "digest=SHA-256", want: ServerConfig{DigestAlgorithm: "SHA-256"}},
		{name: "container", in: "container-check=1s", want: ServerConfig{ContainerCheckInterval: time.Second}},
		{name: "all", in: "skip-acl, digest=SHA-256,container-check=500ms",
			want: ServerConfig{SkipACL: true, DigestAlgorithm: "SHA-256", ContainerCheckInterval: 500 * time.Millisecond}},
		{name: "max session", in: "max-session-timeout=2s", want: ServerConfig{MaxSessionTimeout: 2 * time.Second}},
		{name: "max session below the minimum", in: "max-session-timeout=500ms", bad: true},
		{name: "sync limit", in: "sync-limit=30s", want: ServerConfig{SyncLimit: 30 * time.Second}},
		{name: "sync limit below a second", in: "sync-limit=200ms", bad: true},
		{name: "unknown", in: "skipacl", bad: true},
		{name: "bad duration", in: "container-check=soon", bad: true},
		{name: "empty digest", in: "digest=", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseServerConfig(tt.in)
			if (err != nil) != tt.bad {
				t.Fatalf("ParseServerConfig(%q) error %v, want error %v", tt.in, err, tt.bad)
			}
			if !tt.bad && got != tt.want {
				t.Errorf("ParseServerConfig(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestSyncLimitInZooCfg: sync-limit reaches zoo.cfg as ticks of 500 ms,
// rounded up; the default stays 5 s.
func TestSyncLimitInZooCfg(t *testing.T) {
	for _, tt := range []struct {
		cfg  ServerConfig
		want string
	}{
		{ServerConfig{}, "syncLimit=10\n"},
		{ServerConfig{SyncLimit: 30 * time.Second}, "syncLimit=60\n"},
		{ServerConfig{SyncLimit: 1200 * time.Millisecond}, "syncLimit=3\n"},
	} {
		got := zooCfg(1, "/data", ports{client: 1, admin: 2, peer: 3, election: 4}, nil, true, false, nil, tt.cfg)
		if !strings.Contains(got, tt.want) {
			t.Errorf("zoo.cfg for %v:\n%s\nwant %q", tt.cfg, got, tt.want)
		}
	}
}
