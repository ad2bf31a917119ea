package ensemble

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zkherd/zkherd/connstr"
)

// srvrTimeout bounds one srvr exchange, generously for a busy machine: a
// paused member accepts the TCP connection (the kernel does) but never
// answers.
const srvrTimeout = 3 * time.Second

// srvr sends the srvr four-letter word to addr and returns the reply.
// srvr is whitelisted even on servers that allow no other four-letter word.
// With cfg it goes over TLS (a TLS-only member answers four-letter words
// on its secure port).
func srvr(ctx context.Context, addr string, cfg *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, srvrTimeout)
	defer cancel()
	conn, err := connstr.Dial(ctx, addr, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(conn, 64<<10))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// mode asks addr for its Mode: leader, follower, observer, standalone or
// read-only. A server that is up but not serving (still electing a leader,
// or cut off from the quorum) has no Mode; mode returns an error then.
func mode(ctx context.Context, addr string, cfg *tls.Config) (string, error) {
	reply, err := srvr(ctx, addr, cfg)
	if err != nil {
		return "", fmt.Errorf("ensemble: srvr %s: %w", addr, err)
	}
	sc := bufio.NewScanner(strings.NewReader(reply))
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("ensemble: srvr %s: not serving: %q", addr, strings.TrimSpace(reply))
}
