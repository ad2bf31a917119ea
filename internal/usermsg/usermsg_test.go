package usermsg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/recipes"
)

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"inspect: recipes: no session with 127.0.0.1:1: context deadline exceeded", "no session with 127.0.0.1:1: no answer in time"},
		// Go's network errors, in plain words with their addresses.
		{"fourlw: srvr 127.0.0.1:9: dial tcp 127.0.0.1:9: connect: connection refused", "srvr 127.0.0.1:9: connection refused by 127.0.0.1:9"},
		{"srvr 127.0.0.1:9: dial tcp 127.0.0.1:9: i/o timeout", "srvr 127.0.0.1:9: no answer from 127.0.0.1:9"},
		{"read tcp 127.0.0.1:5->127.0.0.1:9: i/o timeout", "no answer from 127.0.0.1:9"},
		{"write tcp 127.0.0.1:5->127.0.0.1:9: connection reset by peer", "connection reset by 127.0.0.1:9"},
		{"dial tcp 127.0.0.1:9: connect: network is unreachable", "cannot connect to 127.0.0.1:9: network is unreachable"},
		{"dial tcp: lookup zk.example on 127.0.0.53:53: no such host", "no host named zk.example"},
		{"read: use of closed network connection", "read: the connection was closed"},
		{"member 1 (127.0.0.1:1): fourlw: srvr 127.0.0.1:1: connection refused", "member 1 (127.0.0.1:1): srvr 127.0.0.1:1: connection refused"},
		{"x (fourlw: y); loadgen: z", "x (y); z"},
		{"--tls-ca: open ca.pem: no such file", "--tls-ca: open ca.pem: no such file"},
		{"line one\n  line two", "line one line two"},
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if prefix.MatchString(Clean(tt.in)) {
			t.Errorf("Clean(%q) still has a package prefix", tt.in)
		}
	}
}

func TestConnectFix(t *testing.T) {
	tests := []struct {
		msg  string
		tls  bool
		want string
	}{
		{"tls: failed to verify certificate: x509: certificate signed by unknown authority", true, "--tls-ca"},
		{"x509: certificate is valid for localhost, not foo", true, "--tls-server-name"},
		{"remote error: tls: bad certificate", true, "--tls-cert and --tls-key"},
		{"tls: first record does not look like a TLS handshake", true, "leave out the --tls-* flags"},
		{"authentication failed: EOF", false, "needs --tls-ca"},
		{"recipes: authentication failed: the servers refused the credentials", false, "refused the --auth credentials"},
		{"dial tcp 127.0.0.1:1: connect: connection refused", false, "is ZooKeeper running there?"},
	}
	for _, tt := range tests {
		if got := ConnectFix(tt.msg, tt.tls); !strings.Contains(got, tt.want) {
			t.Errorf("ConnectFix(%q, %v) = %q, want it to say %q", tt.msg, tt.tls, got, tt.want)
		}
	}
}

func TestNoSessionLines(t *testing.T) {
	withLast := fmt.Errorf("loadgen: client 3: %w", &recipes.NoSessionError{Servers: []string{"127.0.0.1:1"}, Err: context.DeadlineExceeded, LastAttempt: "dial tcp 127.0.0.1:1: connect: connection refused"})
	noLast := &recipes.NoSessionError{Servers: []string{"127.0.0.1:1"}, Err: context.DeadlineExceeded}
	tests := []struct {
		name, got, want string
	}{
		{"no session, last attempt", NoSession(withLast, false),
			"client 3: no session with 127.0.0.1:1 within the time allowed; last attempt: connection refused by 127.0.0.1:1 (is ZooKeeper running there? check --server; a server that accepts only TLS needs --tls-ca (and --tls-cert, --tls-key))"},
		{"no session, none logged", NoSession(noLast, false),
			"no session with 127.0.0.1:1 within the time allowed (is ZooKeeper running there? check --server; a server that accepts only TLS needs --tls-ca (and --tls-cert, --tls-key))"},
		{"connect failed, last attempt", ConnectFailed("127.0.0.1:1", time.Second, withLast, false),
			"cannot reach ZooKeeper at 127.0.0.1:1 within 1s: connection refused by 127.0.0.1:1 (is ZooKeeper running there? check --server)"},
		{"connect failed, none logged", ConnectFailed("127.0.0.1:1", time.Second, noLast, false),
			"cannot reach ZooKeeper at 127.0.0.1:1 within 1s: no answer (check --server)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got  %q\nwant %q", tt.got, tt.want)
			}
		})
	}
}

// TestUnreachablePrefersHandshake: of several servers' failures, a TLS
// handshake's is the reason given (the others may simply be down).
func TestUnreachablePrefersHandshake(t *testing.T) {
	err := errors.Join(errors.New("dial tcp 127.0.0.1:1: connect: connection refused"),
		&connstr.HandshakeError{Addr: "127.0.0.1:2", Err: errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority")})
	got := Unreachable("127.0.0.1:1,127.0.0.1:2", err, true, false)
	want := "cannot reach ZooKeeper at 127.0.0.1:1,127.0.0.1:2: TLS handshake with 127.0.0.1:2: tls: failed to verify certificate: x509: certificate signed by unknown authority (the servers' certificate is not signed by a CA you trust: give the CA that signed it with --tls-ca)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := Unreachable("127.0.0.1:1", errors.Join(errors.New("dial tcp 127.0.0.1:1: connect: connection refused")), false, false); !strings.Contains(got, ": connection refused by 127.0.0.1:1 (is ZooKeeper running there? check --server)") {
		t.Errorf("one refusal: got %q", got)
	}
}
