package fourlw

import (
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"
)

// SessionID is a ZooKeeper session id. Its top byte is the id of the
// server that created it. It prints in hex, as ZooKeeper does.
type SessionID uint64

func (s SessionID) String() string { return fmt.Sprintf("0x%x", uint64(s)) }

// ParseSessionID parses a session id in hex ("0x1000001f3b60002") or, as
// the AdminServer writes them, in decimal (possibly negative).
func ParseSessionID(s string) (SessionID, error) {
	if hex, ok := strings.CutPrefix(s, "0x"); ok {
		n, err := strconv.ParseUint(hex, 16, 64)
		return SessionID(n), err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		u, uerr := strconv.ParseUint(s, 10, 64)
		return SessionID(u), uerr
	}
	return SessionID(n), nil
}

// Zxid is a ZooKeeper transaction id: the leader's epoch in the high 32
// bits, a counter in the low 32.
type Zxid uint64

func (z Zxid) String() string { return fmt.Sprintf("0x%x", uint64(z)) }

// Epoch is the leader epoch that issued the transaction.
func (z Zxid) Epoch() uint32 { return uint32(z >> 32) }

// Counter is the transaction's number within its epoch.
func (z Zxid) Counter() uint32 { return uint32(z) }

func parseHex(s string) (uint64, error) {
	return strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
}

// Member is one server of an ensemble, as the poller and probe see it.
type Member struct {
	ID       int    // myid, 1-based; 0 when unknown
	Addr     string // client address, host:port: where four-letter words go
	AdminURL string // AdminServer base, "http://host:port" or ".../commands"; empty when unknown or off
	// TLS, when set, reaches Addr over TLS (a secureClientPort: four-letter
	// words answer there after the handshake) and an https AdminURL with
	// the same settings (see connstr.TLS.Config).
	TLS *tls.Config
}

// admin returns the AdminServer client of m, nil when it has none.
func (m Member) admin() *Admin {
	if m.AdminURL == "" {
		return nil
	}
	return &Admin{URL: m.AdminURL, TLS: m.TLS}
}

func (m Member) String() string {
	if m.ID > 0 {
		return fmt.Sprintf("member %d (%s)", m.ID, m.Addr)
	}
	return m.Addr
}
