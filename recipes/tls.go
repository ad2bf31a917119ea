package recipes

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/connstr"
)

// WithTLS makes the session connect over TLS, verified with cfg (see
// connstr.TLS.Config): for servers that accept clients only on a
// secureClientPort. It wraps the dialer (WithDialer or the default one);
// the handshake shares the connect timeout. Digest auth (WithDigestAuth)
// works over it as over plain TCP.
func WithTLS(cfg *tls.Config) SessionOption {
	return func(c *sessionConfig) { c.tls = cfg }
}

// tlsDialer runs the TLS handshake on connections that dial opens, within
// timeout of the dial's start.
func tlsDialer(dial zk.Dialer, cfg *tls.Config, timeout time.Duration) zk.Dialer {
	return func(network, address string, t time.Duration) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		conn, err := dial(network, address, t)
		if err != nil {
			return nil, err
		}
		return connstr.Handshake(ctx, conn, cfg, address)
	}
}
