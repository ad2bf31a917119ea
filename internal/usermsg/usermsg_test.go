package usermsg

import "testing"

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
