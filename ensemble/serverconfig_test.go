package ensemble_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestServerConfigs: each configuration does what it says on real servers.
// A digest ACL made by a client (SHA-1) lets its identity write on a
// default server; on a skipACL server anyone may write; on a SHA-256
// server not even the identity may. An emptied container is reaped within
// a few intervals when the interval is short.
func TestServerConfigs(t *testing.T) {
	for _, tc := range []struct {
		cfg                    ensemble.ServerConfig
		ownerWrites, anyWrites bool
	}{
		{cfg: ensemble.ServerConfig{}, ownerWrites: true},
		{cfg: ensemble.ServerConfig{SkipACL: true}, ownerWrites: true, anyWrites: true},
		{cfg: ensemble.ServerConfig{DigestAlgorithm: "SHA-256", ContainerCheckInterval: 500 * time.Millisecond}},
	} {
		t.Run(tc.cfg.String(), func(t *testing.T) {
			ens := enstest.StartConfig(t, 1, tc.cfg)
			owner := connect(t, ens.Servers(), 10*time.Second)
			other := connect(t, ens.Servers(), 10*time.Second)
			if err := owner.AddAuth("digest", []byte("owner:secret")); err != nil {
				t.Fatal(err)
			}
			acl := append(zk.WorldACL(zk.PermRead), zk.DigestACL(zk.PermAll, "owner", "secret")...)
			if _, err := owner.Create("/guarded", nil, zk.FlagPersistent, acl); err != nil {
				t.Fatal(err)
			}
			check := func(who string, c *zk.Conn, want bool) {
				_, err := c.Set("/guarded", []byte(who), -1)
				if got := err == nil; got != want || (err != nil && !errors.Is(err, zk.ErrNoAuth)) {
					t.Errorf("%s's write: err %v, want allowed=%v", who, err, want)
				}
			}
			check("owner", owner, tc.ownerWrites)
			check("other", other, tc.anyWrites)

			if tc.cfg.ContainerCheckInterval == 0 {
				return
			}
			if _, err := owner.CreateContainer("/box", nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			if _, err := owner.Create("/box/item", nil, zk.FlagPersistent, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			if err := owner.Delete("/box/item", -1); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * tc.cfg.ContainerCheckInterval)
			for {
				ok, _, err := owner.Exists("/box")
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("empty container still there %v after its last child went", 20*tc.cfg.ContainerCheckInterval)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

func TestServerConfigString(t *testing.T) {
	for _, tc := range []struct {
		cfg  ensemble.ServerConfig
		want string
	}{
		{ensemble.ServerConfig{}, "default"},
		{ensemble.ServerConfig{SkipACL: true, DigestAlgorithm: "SHA-256", ContainerCheckInterval: time.Second}, "skipACL+digestAlg=SHA-256+containerCheck=1s"},
	} {
		if got := tc.cfg.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}
