package fourlw

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/zkherd/zkherd/connstr"
)

// MaxReply bounds the size of a reply QueryTLS reads (a wchp reply lists
// every watch of the server: millions of watches are tens of megabytes).
const MaxReply = 256 << 20

var (
	// ErrNotServing is returned (wrapped) when a server answers "This
	// ZooKeeper instance is not currently serving requests": it runs but
	// has no quorum or is still starting.
	ErrNotServing = errors.New("fourlw: server is not currently serving requests")
	// ErrTooLarge is returned when a reply exceeds MaxReply.
	ErrTooLarge = errors.New("fourlw: reply too large")
)

// ErrNotWhitelisted is the error for a four-letter word the server refuses
// because its 4lw.commands.whitelist does not list it. Check for it with
// errors.As.
type ErrNotWhitelisted struct {
	Cmd  string // the refused command
	Addr string // the server that refused it
}

// ConfigLine is the zoo.cfg line that enables every four-letter word.
const ConfigLine = "4lw.commands.whitelist=*"

func (e *ErrNotWhitelisted) Error() string {
	return fmt.Sprintf("fourlw: %s refused by %s: not in its four-letter-word whitelist; add %q to zoo.cfg "+
		"(or list the commands, such as %q) and restart the server",
		e.Cmd, e.Addr, ConfigLine, e.listed())
}

// listed is a whitelist line that allows srvr, the one command allowed by
// default, and the refused command (once, when that is srvr).
func (e *ErrNotWhitelisted) listed() string {
	cmds := "srvr"
	if e.Cmd != "srvr" {
		cmds += ", " + e.Cmd
	}
	return "4lw.commands.whitelist=" + cmds
}

// Fix returns the configuration line that enables the command.
func (e *ErrNotWhitelisted) Fix() string { return ConfigLine }

const (
	notWhitelistedSuffix = " is not executed because it is not in the whitelist."
	notServingReply      = "This ZooKeeper instance is not currently serving requests"
)

// QueryTLS sends the four-letter word cmd to the server at addr (host:port
// of its client port) and returns its reply: over TLS verified with cfg,
// for a server's secureClientPort, or in plain text when cfg is nil. ctx
// bounds the whole exchange, dialling included. A refused command is an
// *ErrNotWhitelisted, a server without quorum ErrNotServing, and a refused
// connection says so with the address.
func QueryTLS(ctx context.Context, addr, cmd string, cfg *tls.Config) (string, error) {
	return query(ctx, addr, cmd, MaxReply, cfg)
}

// query reads at most limit bytes of the reply; a reply cut at limit is
// not an error when limit is below MaxReply (the probe only needs the
// beginning).
func query(ctx context.Context, addr, cmd string, limit int64, cfg *tls.Config) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("fourlw: %q is not a four-letter word", cmd)
	}
	conn, err := connstr.Dial(ctx, addr, cfg)
	if err != nil {
		return "", netError(ctx, cmd, addr, err)
	}
	defer conn.Close()
	// Unblock reads and writes when ctx ends, deadline or not.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", netError(ctx, cmd, addr, err)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(conn, limit+1))
	switch {
	case n > limit && limit >= MaxReply:
		return "", fmt.Errorf("%w: %s from %s is over %d bytes", ErrTooLarge, cmd, addr, limit)
	case n > limit:
		buf.Truncate(int(limit))
	case err != nil:
		// A reset after a complete reply happens when the server closes
		// first; anything else is a failure.
		return "", netError(ctx, cmd, addr, err)
	}
	return checkReply(buf.String(), cmd, addr)
}

// checkReply turns the server's refusals into errors.
func checkReply(reply, cmd, addr string) (string, error) {
	switch {
	case reply == cmd+notWhitelistedSuffix+"\n" || reply == cmd+notWhitelistedSuffix:
		return "", &ErrNotWhitelisted{Cmd: cmd, Addr: addr}
	case len(reply) < 100 && bytes.HasPrefix([]byte(reply), []byte(notServingReply)):
		return "", fmt.Errorf("%w (%s from %s)", ErrNotServing, cmd, addr)
	}
	return reply, nil
}

func netError(ctx context.Context, cmd, addr string, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("fourlw: %s %s: no reply: %w", cmd, addr, ctx.Err())
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("fourlw: %s %s: no reply: %w", cmd, addr, context.DeadlineExceeded)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("fourlw: %s %s: connection refused; is the server running? (%w)", cmd, addr, err)
	}
	return fmt.Errorf("fourlw: %s %s: %w", cmd, addr, err)
}
