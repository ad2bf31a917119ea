package fourlw

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Conn is one client connection of a server, from cons (or stat, with
// fewer fields, or the AdminServer's connections).
type Conn struct {
	Addr     string // client endpoint, host:port
	Interest int    // the selector's interest ops: 0 while the connection is being set up, 1 read, 5 read and write
	Queued   int64  // requests queued
	Received int64  // packets received
	Sent     int64  // packets sent
	// The rest is set for connections with a session (HasSession); a
	// connection without one is a four-letter word or a session being
	// established.
	HasSession  bool
	Session     SessionID
	LastOp      string        // last operation: PING, GETD, CREA, DELE, EXIS, GETC, ...
	Established time.Time     // when the connection was accepted
	Timeout     time.Duration // negotiated session timeout
	LastCxid    int64         // client's last request id
	LastZxid    Zxid          // last zxid the server sent this client
	// LastResponse is the server's clock (milliseconds since it started,
	// not wall time) at its last response.
	LastResponse int64
	LastLatency  int64 // ms
	MinLatency   int64 // ms
	AvgLatency   int64 // ms
	MaxLatency   int64 // ms
	// Member is the member the connection is to; set in merged views.
	Member Member
}

// ParseCons parses the reply to cons: one line per connection.
func ParseCons(reply string) ([]Conn, error) {
	var conns []Conn
	for _, line := range strings.Split(reply, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		c, err := parseConnLine(line)
		if err != nil {
			return conns, fmt.Errorf("fourlw: cons: %w", err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// parseConnLine parses
//
//	/127.0.0.1:46344[1](queued=0,recved=6,sent=6,sid=0x1000001f3b60002,lop=PING,est=1795236727777,to=4000,lcxid=0x2,lzxid=0x10000001e,lresp=164197,llat=0,minlat=0,avglat=1,maxlat=5)
func parseConnLine(line string) (Conn, error) {
	var c Conn
	s := strings.TrimSpace(line)
	open := strings.LastIndex(s, "](")
	lb := strings.LastIndex(s[:max(open, 0)], "[")
	if open < 0 || lb < 0 || !strings.HasSuffix(s, ")") {
		return c, fmt.Errorf("unrecognised connection line %q", abbreviate(line))
	}
	c.Addr = endpoint(s[:lb])
	var err error
	if c.Interest, err = strconv.Atoi(s[lb+1 : open]); err != nil {
		return c, fmt.Errorf("connection line %q: interest ops %w", abbreviate(line), plainNumber(err))
	}
	for _, kv := range strings.Split(s[open+2:len(s)-1], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		num := func() int64 {
			n, e := strconv.ParseInt(v, 10, 64)
			if e != nil && err == nil {
				err = fmt.Errorf("connection line %q: %s %w", abbreviate(line), k, plainNumber(e))
			}
			return n
		}
		hex := func() uint64 {
			n, e := parseHex(v)
			if e != nil && err == nil {
				err = fmt.Errorf("connection line %q: %s %w", abbreviate(line), k, plainNumber(e))
			}
			return n
		}
		switch k {
		case "queued":
			c.Queued = num()
		case "recved":
			c.Received = num()
		case "sent":
			c.Sent = num()
		case "sid":
			c.Session, c.HasSession = SessionID(hex()), true
		case "lop":
			c.LastOp = v
		case "est":
			c.Established = time.UnixMilli(num())
		case "to":
			c.Timeout = time.Duration(num()) * time.Millisecond
		case "lcxid":
			c.LastCxid = int64(hex())
		case "lzxid":
			if v == "0xffffffffffffffff" {
				continue // no zxid sent yet
			}
			c.LastZxid = Zxid(hex())
		case "lresp":
			c.LastResponse = num()
		case "llat":
			c.LastLatency = num()
		case "minlat":
			c.MinLatency = num()
		case "avglat":
			c.AvgLatency = num()
		case "maxlat":
			c.MaxLatency = num()
		}
	}
	return c, err
}

// endpoint turns Java's InetSocketAddress text ("/127.0.0.1:46344",
// "localhost/127.0.0.1:46344", "/0:0:0:0:0:0:0:1:51234") into host:port.
func endpoint(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s
	}
	host, port := strings.Trim(s[:i], "[]"), s[i+1:]
	return net.JoinHostPort(host, port)
}
