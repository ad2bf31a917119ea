// Package connstr says how to reach an ensemble: it parses ZooKeeper
// connect strings ("host:port,host:port/chroot"), the form every ZooKeeper
// client accepts, into the server list and chroot that go-zookeeper wants
// separately, and holds the TLS settings every connection zkherd makes
// shares (TLS, Dial).
package connstr

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// DefaultPort is ZooKeeper's client port, used when a host names none.
const DefaultPort = 2181

// ErrMalformed marks a connect string that cannot be parsed.
var ErrMalformed = errors.New("malformed connect string")

// ConnectString is a parsed connect string.
type ConnectString struct {
	Servers []string // "host:port", in the order given
	Chroot  string   // "" or an absolute path without trailing slash
}

// String renders the canonical form, chroot included.
func (c ConnectString) String() string {
	return strings.Join(c.Servers, ",") + c.Chroot
}

// Parse reads "h1[:p1][,h2[:p2]...][/chroot]". Hosts may be names, IPv4, or
// bracketed IPv6 ("[::1]:2181"). Errors match ErrMalformed and are marked
// as connstr's (package pkgerr).
func Parse(s string) (ConnectString, error) {
	cs, err := parse(s)
	return cs, pkgerr.Wrap("connstr", err)
}

func parse(s string) (ConnectString, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return ConnectString{}, fmt.Errorf("%w: empty; expected host:port[,host:port...][/chroot], e.g. 127.0.0.1:2181", ErrMalformed)
	}
	var cs ConnectString
	hosts := raw
	if i := strings.Index(raw, "/"); i >= 0 {
		hosts, cs.Chroot = raw[:i], raw[i:]
		if err := checkChroot(cs.Chroot); err != nil {
			return ConnectString{}, fmt.Errorf("%w %q: %v", ErrMalformed, s, err)
		}
	}
	for _, h := range strings.Split(hosts, ",") {
		addr, err := parseHost(strings.TrimSpace(h))
		if err != nil {
			return ConnectString{}, fmt.Errorf("%w %q: %v; expected host:port[,host:port...][/chroot]", ErrMalformed, s, err)
		}
		cs.Servers = append(cs.Servers, addr)
	}
	return cs, nil
}

func parseHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("empty host")
	}
	host, port := h, strconv.Itoa(DefaultPort)
	if strings.HasPrefix(h, "[") || strings.Count(h, ":") == 1 {
		var err error
		if host, port, err = net.SplitHostPort(h); err != nil {
			if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
				host, port = strings.Trim(h, "[]"), strconv.Itoa(DefaultPort)
			} else {
				return "", fmt.Errorf("host %q: %v", h, err)
			}
		}
	} else if strings.Count(h, ":") > 1 {
		return "", fmt.Errorf("host %q: IPv6 addresses need brackets, e.g. [::1]:2181", h)
	}
	if host == "" {
		return "", fmt.Errorf("host %q: missing host name", h)
	}
	if strings.ContainsAny(host, " /\\@") {
		return "", fmt.Errorf("host %q: invalid character in host name", host)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("host %q: port %q is not a number from 1 to 65535", h, port)
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

func checkChroot(p string) error {
	if p == "/" {
		return errors.New(`chroot "/" is the root; leave it out`)
	}
	if strings.HasSuffix(p, "/") {
		return fmt.Errorf("chroot %q must not end with /", p)
	}
	if strings.Contains(p, "//") {
		return fmt.Errorf("chroot %q has an empty path element", p)
	}
	return nil
}
