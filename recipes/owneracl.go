package recipes

import (
	"crypto/rand"
	"sync"

	"github.com/go-zookeeper/zk"
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

// ownerACL returns ownerOnlyACL once the session carries this process's
// identity (added on first use; go-zookeeper resends it after reconnects),
// and ok false when the identity could not be added: the caller then
// creates an ordinary world-writable node and must not rely on the
// guarantee. While disconnected (go-zookeeper would hold the request
// until it reconnects, past the caller's ctx) or after a connection error,
// it does not try and the next call tries again. Correctness never
// depends on the identity, only the listing-free hand-off does.
func (s *Session) ownerACL() (acl []zk.ACL, ok bool) {
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
	return ownerOnlyACL(), true
}
