package connstr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// ErrTLSConfig marks TLS files that cannot be used.
var ErrTLSConfig = errors.New("bad TLS configuration")

// TLS names, by file, how a client reaches servers that accept only TLS
// (ZooKeeper's secureClientPort): the one connection setting every part of
// zkherd shares (sessions, four-letter words, the AdminServer over HTTPS).
// The zero value means plain TCP.
type TLS struct {
	// CA is a PEM file of the certificates that sign the servers'
	// certificates. Empty: the system's trusted roots.
	CA string
	// Cert and Key are a PEM client certificate and its private key, for
	// servers that ask for one (ZooKeeper's ssl.clientAuth=need, its
	// default). Both or neither.
	Cert, Key string
	// ServerName is the name checked against each server's certificate.
	// Empty: each server's host as written in the connect string.
	ServerName string
}

// Enabled reports whether any TLS setting is given.
func (t TLS) Enabled() bool { return t != TLS{} }

// Config loads the files into a client configuration; nil when TLS is not
// enabled. Errors name the file and what is wrong with it, marked as
// connstr's (package pkgerr).
func (t TLS) Config() (*tls.Config, error) {
	cfg, err := t.config()
	return cfg, pkgerr.Wrap("connstr", err)
}

func (t TLS) config() (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: t.ServerName, MinVersion: tls.VersionTLS12}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file: %w", ErrTLSConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrTLSConfig, t.CA)
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.Cert != "" && t.Key != "":
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate %s and key %s: %w", ErrTLSConfig, t.Cert, t.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.Cert != "" || t.Key != "":
		return nil, fmt.Errorf("%w: a client certificate needs both its certificate and its key file", ErrTLSConfig)
	}
	return cfg, nil
}

// ForServer returns cfg ready to dial addr: unless cfg names the server,
// addr's host is the name its certificate must carry (an IP address is
// checked against the certificate's IP addresses).
func ForServer(cfg *tls.Config, addr string) *tls.Config {
	if cfg.ServerName != "" {
		return cfg
	}
	c := cfg.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		c.ServerName = host
	} else {
		c.ServerName = addr
	}
	return c
}

// Handshake runs the TLS client handshake on conn, an open connection to
// addr, within ctx. On failure it closes conn.
func Handshake(ctx context.Context, conn net.Conn, cfg *tls.Config, addr string) (*tls.Conn, error) {
	tc := tls.Client(conn, ForServer(cfg, addr))
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, &HandshakeError{Addr: addr, Err: err}
	}
	return tc, nil
}

// HandshakeError is a TLS handshake with Addr that failed: the server
// answered, but not as TLS with these settings expect (a reason more
// telling than a refusal from a server that is down).
type HandshakeError struct {
	Addr string
	Err  error
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("TLS handshake with %s: %v", e.Addr, e.Err)
}

// Unwrap returns the handshake's failure.
func (e *HandshakeError) Unwrap() error { return e.Err }

// Dial opens a connection to addr within ctx: plain TCP when cfg is nil,
// else TLS verified with cfg.
func Dial(ctx context.Context, addr string, cfg *tls.Config) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || cfg == nil {
		return conn, err
	}
	return Handshake(ctx, conn, cfg, addr)
}

// ErrTLSOnly is returned (wrapped) by Reachable for a server reached
// without TLS settings that answers only a TLS handshake (ZooKeeper's
// secureClientPort).
var ErrTLSOnly = errors.New("the server accepts only TLS")

// plainProbeWait bounds the wait for a plain server's reply to the probe
// in Reachable: a ZooKeeper server answers a four-letter word at once.
const plainProbeWait = 500 * time.Millisecond

// Reachable dials every server at once (with the TLS handshake when cfg is
// set) and returns nil as soon as one accepts, else every server's error:
// a quick answer to "does anything listen there?" before a session is
// attempted, since a ZooKeeper client retries refused connections forever.
// Without cfg a server must also speak plain ZooKeeper: one that answers
// only a TLS handshake fails with ErrTLSOnly, at once rather than after
// the sessions' timeout.
func Reachable(ctx context.Context, servers []string, cfg *tls.Config) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(servers))
	for _, addr := range servers {
		go func() { errs <- reach(ctx, addr, cfg) }()
	}
	var all []error
	for range servers {
		err := <-errs
		if err == nil {
			return nil
		}
		all = append(all, err)
	}
	return errors.Join(all...)
}

func reach(ctx context.Context, addr string, cfg *tls.Config) error {
	conn, err := Dial(ctx, addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	if cfg != nil || answersPlain(ctx, conn) || !speaksTLS(ctx, addr) {
		// Something that is not TLS listens: the session says more if it
		// is not ZooKeeper.
		return nil
	}
	return fmt.Errorf("%w (%s)", ErrTLSOnly, addr)
}

// answersPlain sends ruok, the cheapest four-letter word: a plain
// ZooKeeper server answers it at once, whitelisted or not ("imok", or that
// it is not whitelisted). A TLS port waits for the rest of a TLS record.
func answersPlain(ctx context.Context, conn net.Conn) bool {
	deadline := time.Now().Add(plainProbeWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return false
	}
	if _, err := conn.Write([]byte("ruok")); err != nil {
		return false
	}
	var b [1]byte
	n, _ := conn.Read(b[:])
	return n > 0
}

// speaksTLS reports whether addr completes a TLS handshake, or answers one
// with a TLS alert (it wants a client certificate): the server's
// certificate is not checked, nothing is sent over the connection.
func speaksTLS(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, plainProbeWait)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	// Only to learn whether the server speaks TLS; no data is exchanged.
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec
	err = tc.HandshakeContext(ctx)
	var remote *net.OpError // a TLS alert from the server
	return err == nil || errors.As(err, &remote) && remote.Op == "remote error"
}
