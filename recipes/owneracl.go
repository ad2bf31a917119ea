package recipes

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// Nodes whose data only their creator may write. The fair lock reads a
// write to its predecessor's data as that predecessor's release by its
// holder (Lock.acquire); the server must make sure no one else can cause
// one. Each process authenticates its sessions with a digest identity of
// its own, unknown outside it, and creates such nodes with an ACL that
// lets the world read them and only that identity write them.

// ownerUser is the digest user of this process's identity; the password is
// random per process, so no other process can authenticate as it.
const ownerUser = "zkherd-owner"

var processPassword = sync.OnceValue(rand.Text)

// ownerOnlyACL lets anyone read and only this process's identity do
// anything else (write, change the ACL).
var ownerOnlyACL = sync.OnceValue(func() []zk.ACL {
	return append([]zk.ACL{{Perms: zk.PermRead, Scheme: "world", ID: "anyone"}},
		zk.DigestACL(zk.PermAll, ownerUser, processPassword())...)
})

// ownerACL returns ownerOnlyACL and ok true when nodes created with it
// can be trusted to be written by their owner only: the session carries
// this process's identity (added on first use; go-zookeeper resends it
// after reconnects) and the server was seen to enforce the ACL
// (probeOwnerACL). Otherwise it returns the open ACL and ok false: the
// caller must not rely on the guarantee (Lock hands off by listing). While
// disconnected (go-zookeeper would hold the request until it reconnects,
// past the caller's ctx) or after a connection error it does not try, and
// the next call tries again. Correctness never depends on the identity,
// only the listing-free hand-off does. dir is where the probe's nodes go
// (they never become visible: see probeOwnerACL).
func (s *Session) ownerACL(ctx context.Context, dir string) (acl []zk.ACL, ok bool) {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	if !s.authTried {
		if _, st := s.Changed(); st != StateConnected {
			return openACL, false
		}
		err := s.conn.AddAuth("digest", []byte(ownerUser+":"+processPassword()))
		if err != nil && isConnErr(err) {
			return openACL, false
		}
		s.authTried, s.authOK = true, err == nil
		if err != nil {
			sessionLogger{s}.Printf("recipes: adding the owner identity: %v (lock hand-offs will list the directory)", err)
		}
	}
	if !s.authOK {
		return openACL, false
	}
	if !s.probed {
		if _, st := s.Changed(); st != StateConnected {
			return openACL, false
		}
		enforced, err := probeOwnerACL(ctx, s, dir)
		if err != nil {
			return openACL, false // try again next time
		}
		s.probed, s.enforced = true, enforced
		if !enforced {
			sessionLogger{s}.Printf("recipes: the server does not enforce owner-only ACLs as zkherd needs (skipACL, a super user, or another digest algorithm): lock hand-offs will list the directory")
		}
	}
	if !s.enforced {
		return openACL, false
	}
	return ownerOnlyACL(), true
}

// probeOwnerACL finds out, in one transaction that never takes effect on a
// server that behaves, whether the server lets our identity write a node
// created with ownerOnlyACL (it does not when its digest algorithm is not
// the SHA-1 clients compute) and refuses the write of an identity the ACL
// does not name (it does not with skipACL=yes, or for a super user). The
// transaction creates two ephemeral nodes, one owned by us and one by an
// identity nobody holds, writes both and deletes both: the server that
// enforces the ACL fails it at the second write (so nothing was ever
// created); a server that enforces nothing applies it whole, leaving
// nothing either. A NoAuth at the first write means our own identity is
// refused.
func probeOwnerACL(ctx context.Context, s *Session, dir string) (enforced bool, err error) {
	base := joinPath(dir, "zkherd-acl-probe-"+uuid.NewString())
	ours, foreign := base+"-ours", base+"-foreign"
	foreignACL := append([]zk.ACL{{Perms: zk.PermRead, Scheme: "world", ID: "anyone"}},
		zk.DigestACL(zk.PermAll, "zkherd-probe", rand.Text())...)
	for madeDir := false; ; madeDir = true {
		var res []zk.MultiResponse
		err := retryConn(ctx, s, func() (err error) {
			res, err = s.conn.Multi(
				&zk.CreateRequest{Path: ours, Acl: ownerOnlyACL(), Flags: zk.FlagEphemeral},
				&zk.SetDataRequest{Path: ours, Data: []byte("probe"), Version: -1},
				&zk.CreateRequest{Path: foreign, Acl: foreignACL, Flags: zk.FlagEphemeral},
				&zk.SetDataRequest{Path: foreign, Data: []byte("probe"), Version: -1},
				&zk.DeleteRequest{Path: ours, Version: -1},
				&zk.DeleteRequest{Path: foreign, Version: -1},
			)
			return err
		})
		switch {
		case err == nil:
			return false, nil // a foreign identity could write
		case len(res) == 6 && errors.Is(res[0].Error, zk.ErrNoNode) && !madeDir:
			if err := ensurePath(ctx, s, dir); err != nil {
				return false, err
			}
			continue
		case len(res) == 6 && errors.Is(res[1].Error, zk.ErrNoAuth):
			return false, nil // our own identity is refused
		case len(res) == 6 && res[1].Error == nil && errors.Is(res[3].Error, zk.ErrNoAuth):
			return true, nil
		}
		return false, fmt.Errorf("recipes: probe the server's ACLs in %s: %w", dir, err)
	}
}
