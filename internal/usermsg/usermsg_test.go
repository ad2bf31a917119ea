package usermsg

import (
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"inspect: recipes: no session with 127.0.0.1:1: context deadline exceeded", "no session with 127.0.0.1:1: context deadline exceeded"},
		{"member 1 (127.0.0.1:1): fourlw: srvr 127.0.0.1:1: connection refused", "member 1 (127.0.0.1:1): srvr 127.0.0.1:1: connection refused"},
		{"x (fourlw: y); loadgen: z", "x (y); z"},
		{"--tls-ca: open ca.pem: no such file", "--tls-ca: open ca.pem: no such file"},
		{"line one\n  line two", "line one line two"},
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if HasPackagePrefix(Clean(tt.in)) {
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
		{"dial tcp 127.0.0.1:1: connect: connection refused", false, "is ZooKeeper running there?"},
	}
	for _, tt := range tests {
		if got := ConnectFix(tt.msg, tt.tls); !strings.Contains(got, tt.want) {
			t.Errorf("ConnectFix(%q, %v) = %q, want it to say %q", tt.msg, tt.tls, got, tt.want)
		}
	}
}
