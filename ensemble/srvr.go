package ensemble

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// srvrTimeout bounds one srvr exchange, generously for a busy machine: a
// paused member accepts the TCP connection (the kernel does) but never
// answers.
const srvrTimeout = 3 * time.Second

// mode asks addr for its Mode (fourlw's srvr, whitelisted even on servers
// that allow no other four-letter word; over TLS with cfg, as a TLS-only
// member answers on its secure port): leader, follower, observer,
// standalone or read-only. A server that is up but not serving (still
// electing a leader, or cut off from the quorum) has no Mode; mode returns
// an error then.
func mode(ctx context.Context, addr string, cfg *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, srvrTimeout)
	defer cancel()
	reply, err := fourlw.QueryTLS(ctx, addr, string(fourlw.CmdSrvr), cfg)
	if err != nil {
		return "", fmt.Errorf("ensemble: %w", err)
	}
	// Only the Mode line matters: a figure fourlw cannot parse is no
	// reason to doubt it.
	if st, _ := fourlw.ParseSrvr(reply); st.Mode != "" {
		return st.Mode, nil
	}
	return "", fmt.Errorf("ensemble: srvr %s: not serving: %q", addr, strings.TrimSpace(reply))
}
