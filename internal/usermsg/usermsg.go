// Package usermsg turns library errors into the one line a user reads:
// zkherd's packages prefix their errors with their names ("recipes: ...",
// as Go errors should be), which mean nothing to a user, so Clean removes
// them wherever they occur in the chain.
package usermsg

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/recipes"
)

// packages are zkherd's package names that appear as error prefixes.
var packages = []string{
	"cluster", "connstr", "distrib", "ensemble", "enstest", "exporter", "faultproxy", "faults", "fourlw", "inspect",
	"loadgen", "metrics", "oracle", "recipes", "reliability", "report", "scalemodel", "scenarios", "subtree", "tui",
}

// prefix matches "pkg: " at the start of a message or after a separator
// (": ", "(", "; ", a space).
var prefix = regexp.MustCompile(`(^|[\s(;:])(?:` + strings.Join(packages, "|") + `): `)

// Clean removes package-name prefixes from msg, says Go's network errors
// in plain words and joins its lines.
func Clean(msg string) string {
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
	for {
		next := prefix.ReplaceAllString(msg, "$1")
		if next == msg {
			return plainNetwork(msg)
		}
		msg = next
	}
}

// netPhrases rewrite the text of Go's net and context errors ("dial tcp
// 127.0.0.1:1: connect: connection refused", "read tcp a->b: i/o
// timeout", "context deadline exceeded"), which name Go's calls, into
// what happened, keeping the address and the words an operator searches
// for ("connection refused"). Most specific first.
var netPhrases = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`dial tcp: lookup (\S+?)(?: on \S+)?: no such host`), "no host named $1"},
	{regexp.MustCompile(`dial tcp (\S+): connect: connection refused`), "connection refused by $1"},
	{regexp.MustCompile(`dial tcp (\S+): i/o timeout`), "no answer from $1"},
	{regexp.MustCompile(`dial tcp (\S+): connect: `), "cannot connect to $1: "},
	{regexp.MustCompile(`(?:read|write) tcp \S+->(\S+): i/o timeout`), "no answer from $1"},
	{regexp.MustCompile(`(?:read|write) tcp \S+->(\S+): connection reset by peer`), "connection reset by $1"},
	{regexp.MustCompile(`(?:read|write) tcp \S+->(\S+): `), "connection to $1: "},
	{regexp.MustCompile(`use of closed network connection`), "the connection was closed"},
	{regexp.MustCompile(`context deadline exceeded`), "no answer in time"},
}

// plainNetwork applies netPhrases to msg.
func plainNetwork(msg string) string {
	for _, p := range netPhrases {
		msg = p.re.ReplaceAllString(msg, p.with)
	}
	return msg
}

// ConnectFix names the likely fix for a failure to reach ZooKeeper, read
// from the failure's text (the TLS and network errors of Go's libraries,
// and go-zookeeper's log lines, which carry no types); tls says whether
// TLS settings were given. "" when nothing more specific than checking
// the address applies.
func ConnectFix(msg string, tls bool) string {
	switch {
	case strings.Contains(msg, "certificate signed by unknown authority"), strings.Contains(msg, "x509: certificate is not trusted"):
		return "the servers' certificate is not signed by a CA you trust: give the CA that signed it with --tls-ca"
	case strings.Contains(msg, "x509: certificate is valid for"), strings.Contains(msg, "x509: cannot validate certificate"):
		return "the servers' certificate does not name the host you dialled: give the name it carries with --tls-server-name"
	case strings.Contains(msg, "tls: bad certificate"), strings.Contains(msg, "tls: certificate required"):
		return "the servers want a client certificate they trust: give --tls-cert and --tls-key"
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the servers do not speak TLS on that port: leave out the --tls-* flags, or use their secureClientPort"
	case strings.Contains(msg, authRefused):
		return "the servers refused the --auth credentials"
	case strings.Contains(msg, noHandshake):
		if tls {
			return "is that ZooKeeper's secureClientPort? check --server"
		}
		return "is that ZooKeeper's client port (2181 by default)? check --server; a server that accepts only TLS needs --tls-ca (and --tls-cert, --tls-key)"
	case !tls && (strings.Contains(msg, "EOF") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "no answer in time") || strings.Contains(msg, "no reply") || strings.Contains(msg, "within the time allowed")):
		return "is ZooKeeper running there? check --server; a server that accepts only TLS needs --tls-ca (and --tls-cert, --tls-key)"
	case strings.Contains(msg, "connection refused"):
		return "is ZooKeeper running there? check --server"
	}
	return "check --server"
}

// authRefused is what a session whose credentials the servers refused
// says (recipes), unlike go-zookeeper's failed handshakes.
const authRefused = "authentication failed: the servers refused the credentials"

// noHandshake is what an attempt that reached a port but got no
// ZooKeeper handshake back says.
const noHandshake = "the port accepted the connection but gave no ZooKeeper handshake reply"

// handshakeAttempt is go-zookeeper's account of a failed attempt as a
// user reads it. The library calls its connect handshake
// "authentication" and appends the socket's error ("authentication
// failed: read tcp ...: i/o timeout"): with no credentials involved, that
// is a port that is not ZooKeeper's (an HTTP server, the AdminServer), or
// a TLS-only one.
func handshakeAttempt(msg string) string {
	const lib = "authentication failed: "
	i := strings.Index(msg, lib)
	if i < 0 || strings.Contains(msg, authRefused) {
		return msg
	}
	return msg[:i] + noHandshake
}

// Unreachable is the one line for servers none of which accepted a
// connection (connstr.Reachable's error): one server's reason, a TLS
// failure rather than a refusal when there are both (the others may simply
// be down), and the likely fix; timedOut when the check ran out of time.
func Unreachable(servers string, err error, tls, timedOut bool) string {
	if !tls && errors.Is(err, connstr.ErrTLSOnly) {
		return "ZooKeeper at " + servers + " accepts only TLS connections: it needs --tls-ca (the CA that signed its certificates), and --tls-cert, --tls-key when it checks client certificates"
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap() // one per server
	}
	reason := errs[0].Error()
	for _, e := range errs {
		if he := (*connstr.HandshakeError)(nil); errors.As(e, &he) {
			reason = e.Error()
			break
		}
	}
	if timedOut {
		reason = "no answer"
	}
	return "cannot reach ZooKeeper at " + servers + ": " + plainNetwork(reason) + " (" + ConnectFix(reason, tls) + ")"
}

// ConnectFailed is the one line for a first session that could not be
// opened within timeout: where, the last attempt's failure (no answer
// when none was logged and the time ran out) and the likely fix.
func ConnectFailed(servers string, timeout time.Duration, err error, tls bool) string {
	msg := Clean(err.Error())
	var ne *recipes.NoSessionError
	if errors.As(err, &ne) && ne.LastAttempt != "" {
		msg = handshakeAttempt(Clean(ne.LastAttempt))
	} else if errors.Is(err, context.DeadlineExceeded) {
		msg = "no answer"
	}
	return fmt.Sprintf("cannot reach ZooKeeper at %s within %v: %s (%s)", servers, timeout, strings.TrimSuffix(msg, ")"), ConnectFix(msg, tls))
}

// NoSession is the one line for a session that could not be opened (by
// any command): what failed, the last attempt's failure and the likely
// fix in place of the library's hint.
func NoSession(err error, tls bool) string {
	msg := err.Error()
	var ne *recipes.NoSessionError
	if errors.As(err, &ne) {
		short := ne.Head()
		if errors.Is(ne.Err, context.DeadlineExceeded) {
			short = "no session with " + strings.Join(ne.Servers, ",") + " within the time allowed"
		}
		if ne.LastAttempt != "" {
			short += "; last attempt: " + handshakeAttempt(ne.LastAttempt)
		}
		msg = strings.Replace(msg, ne.Error(), short, 1)
	}
	msg = Clean(msg)
	return msg + " (" + ConnectFix(msg, tls) + ")"
}

// NoTerminal is the one line for a screen (Bubble Tea) that could not
// open the terminal it draws on ("bubbletea: could not open TTY"), for
// command (such as "zkherd inspect"); ok is false for other errors. The
// library's error has no type: its text is matched.
func NoTerminal(err error, command string) (line string, ok bool) {
	msg := err.Error()
	if !strings.Contains(msg, "could not open TTY") && !strings.Contains(msg, "error opening TTY") {
		return "", false
	}
	fix := "run it in a terminal"
	if strings.HasSuffix(command, " load") || strings.HasSuffix(command, " demo") {
		fix += ", or give --no-tui for progress lines instead of the dashboard"
	}
	return strings.TrimPrefix(command, "zkherd ") + " draws its screen on a terminal, and this process has none (no /dev/tty): " + fix, true
}

// Interrupted is the one line for a command stopped by Ctrl-C (or SIGTERM,
// SIGHUP) whose error is only the cancellation ("context canceled").
func Interrupted(command string) string {
	return "interrupted: " + strings.TrimPrefix(command, "zkherd ") + " stopped before it finished (run it again to do the rest)"
}
