package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/fourlw"
)

// Members lists the members `cluster status` polls: servers in order,
// each with the AdminServer to try (AdminURL) and tlsCfg for both.
// adminURLs, when given, name the AdminServers in servers' order.
func Members(servers, adminURLs []string, tlsCfg *tls.Config) []fourlw.Member {
	members := make([]fourlw.Member, len(servers))
	for i, addr := range servers {
		members[i] = fourlw.Member{ID: i + 1, Addr: addr, AdminURL: AdminURL(addr, i, adminURLs, tlsCfg != nil), TLS: tlsCfg}
	}
	return members
}

// AdminURLs maps each server address to the AdminServer to try for it
// (AdminURL): what inspect's poller asks when a four-letter word is not
// whitelisted.
func AdminURLs(servers, given []string, https bool) map[string]string {
	out := make(map[string]string, len(servers))
	for i, addr := range servers {
		if u := AdminURL(addr, i, given, https); u != "" {
			out[addr] = u
		}
	}
	return out
}

// TLSConfig is the client configuration for r's certificates; nil for an
// ensemble without TLS.
func (r Record) TLSConfig() (*tls.Config, error) {
	if r.TLS == nil {
		return nil, nil
	}
	return connstr.TLS{CA: r.TLS.CA, Cert: r.TLS.Cert, Key: r.TLS.Key}.Config()
}

// AdminURL picks the AdminServer to try for member i at addr: the one
// given, the one a running `cluster up` recorded, or the server's default
// port (8080; https when https).
func AdminURL(addr string, i int, given []string, https bool) string {
	if i < len(given) {
		return given[i]
	}
	if u, ok := RecordedAdminURL(addr); ok {
		return u
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, "8080")
}

// MemberID reads a member argument: a number from 1 to N, or a client
// address of r.
func (r Record) MemberID(arg string) (int, error) {
	if n, err := strconv.Atoi(arg); err == nil {
		if n < 1 || n > len(r.Members) {
			return 0, fmt.Errorf("member %d: the ensemble at %s has members 1 to %d", n, r.ConnectString(), len(r.Members))
		}
		return n, nil
	}
	if m, ok := r.Member(arg); ok {
		return m.ID, nil
	}
	return 0, fmt.Errorf("member %q: give a member number (1 to %d) or one of %s", arg, len(r.Members), r.ConnectString())
}

// Act runs op (OpKill, ...) on member (a number or a client address) of
// the running `cluster up` that has servers (the only one running, with
// none given), and returns its reply.
func Act(ctx context.Context, servers []string, op, member string) (Reply, error) {
	rec, err := Find(servers)
	if err != nil {
		return Reply{}, err
	}
	id, err := rec.MemberID(member)
	if err != nil {
		return Reply{}, err
	}
	r, err := Send(ctx, rec, op, id)
	if err != nil {
		return Reply{}, fmt.Errorf("%s member %d: %w", op, id, err)
	}
	return r, nil
}

// WriteText writes the reply's message, for a person.
func (r Reply) WriteText(w io.Writer) error {
	_, err := fmt.Fprintln(w, r.Message)
	return err
}
