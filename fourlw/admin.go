package fourlw

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"
)

// AdminConfigHint says how to turn on a server's AdminServer.
const AdminConfigHint = "admin.enableServer=true (and admin.serverPort); Debian's package also needs " +
	"/usr/share/java/servlet-api.jar on the server's class path"

// adminNames maps four-letter words to the AdminServer commands that answer
// the same question.
var adminNames = map[string]string{
	"srvr": "stats", "stat": "stats", "mntr": "monitor", "cons": "connections",
	"wchp": "watches_by_path", "wchc": "watches", "wchs": "watch_summary",
	"dump": "dump", "conf": "configuration", "envi": "environment",
	"ruok": "ruok", "isro": "is_read_only",
}

// AdminCommand returns the AdminServer command that stands in for the
// four-letter word cmd, or "" when there is none.
func AdminCommand(cmd string) string { return adminNames[cmd] }

// defaultHTTP closes connections after each request: polls are a second
// apart, and idle connections would outlive the poller.
var defaultHTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// Admin asks one server's AdminServer (HTTP, JSON). Its commands ignore the
// four-letter-word whitelist.
type Admin struct {
	// URL is the AdminServer's address: "http://127.0.0.1:8080" or
	// "http://127.0.0.1:8080/commands".
	URL string
	// HTTP defaults to a client that does not keep connections alive.
	HTTP *http.Client
	// TLS verifies an https URL (the AdminServer with admin.forceHttps or
	// admin.portUnification) when HTTP is nil. Nil: the system's roots.
	TLS *tls.Config
}

func (a Admin) commandURL(name string) string {
	base := strings.TrimSuffix(a.URL, "/")
	if !strings.HasSuffix(base, "/commands") {
		base += "/commands"
	}
	return base + "/" + name
}

// Do runs the AdminServer command name and decodes its JSON reply into out
// (nil to discard it). A reply whose "error" field is set is an error;
// "not currently serving requests" is ErrNotServing.
func (a Admin) Do(ctx context.Context, name string, out any) error {
	url := a.commandURL(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("fourlw: %w", err)
	}
	client := a.HTTP
	switch {
	case client != nil:
	case a.TLS != nil:
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: a.TLS}}
	default:
		client = defaultHTTP
	}
	resp, err := client.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("fourlw: %s: no reply: %w", url, ctx.Err())
		case errors.Is(err, syscall.ECONNREFUSED):
			return fmt.Errorf("fourlw: %s: connection refused; is the AdminServer on? It needs %s (%w)", url, AdminConfigHint, err)
		}
		return fmt.Errorf("fourlw: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxReply))
	if err != nil {
		return fmt.Errorf("fourlw: %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		// monitor fails with a NullPointerException on zkServer while the
		// server has no quorum.
		if bytes.Contains(body, []byte("zkServer&quot; is null")) || bytes.Contains(body, []byte(notServingReply)) {
			return fmt.Errorf("%w (%s)", ErrNotServing, url)
		}
		return fmt.Errorf("fourlw: %s: %s", url, resp.Status)
	}
	var envelope struct {
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("fourlw: %s: reply is not JSON: %w", url, err)
	}
	if envelope.Error != nil {
		if strings.HasPrefix(*envelope.Error, notServingReply) {
			return fmt.Errorf("%w (%s)", ErrNotServing, url)
		}
		return fmt.Errorf("fourlw: %s: %s", url, *envelope.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("fourlw: %s: %w", url, err)
	}
	return nil
}

// Ruok reports whether the AdminServer answers.
func (a Admin) Ruok(ctx context.Context) error { return a.Do(ctx, "ruok", nil) }

// Monitor returns the monitor command's figures with mntr's key names
// ("znode_count" becomes "zk_znode_count").
func (a Admin) Monitor(ctx context.Context) (Mntr, error) {
	var raw map[string]json.RawMessage
	if err := a.Do(ctx, "monitor", &raw); err != nil {
		return nil, err
	}
	return monitorToMntr(raw)
}

func monitorToMntr(raw map[string]json.RawMessage) (Mntr, error) {
	m := Mntr{}
	for k, v := range raw {
		if k == "command" || k == "error" {
			continue
		}
		var s string
		if len(v) > 0 && v[0] == '"' {
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, fmt.Errorf("fourlw: monitor: %s: %w", k, err)
			}
		} else {
			s = string(v)
		}
		m["zk_"+k] = s
	}
	if _, ok := m["zk_server_state"]; !ok {
		return m, errors.New("fourlw: monitor: reply has no server_state")
	}
	return m, nil
}

// Connections returns the connections command's list (as cons).
func (a Admin) Connections(ctx context.Context) ([]Conn, error) {
	var reply connectionsReply
	if err := a.Do(ctx, "connections", &reply); err != nil {
		return nil, err
	}
	return reply.conns(), nil
}

type connectionsReply struct {
	Connections []adminConn `json:"connections"`
	Secure      []adminConn `json:"secure_connections"`
}

func (r connectionsReply) conns() []Conn {
	conns := make([]Conn, 0, len(r.Connections)+len(r.Secure))
	for _, c := range append(r.Connections, r.Secure...) {
		conns = append(conns, c.conn())
	}
	return conns
}

type adminConn struct {
	Remote       string  `json:"remote_socket_address"`
	Interest     int     `json:"interest_ops"`
	Outstanding  int64   `json:"outstanding_requests"`
	Received     int64   `json:"packets_received"`
	Sent         int64   `json:"packets_sent"`
	Session      *int64  `json:"session_id"`
	LastOp       string  `json:"last_operation"`
	Established  int64   `json:"established"`
	Timeout      int64   `json:"session_timeout"`
	LastCxid     int64   `json:"last_cxid"`
	LastZxid     int64   `json:"last_zxid"`
	LastResponse int64   `json:"last_response_time"`
	LastLatency  int64   `json:"last_latency"`
	MinLatency   int64   `json:"min_latency"`
	AvgLatency   float64 `json:"avg_latency"`
	MaxLatency   int64   `json:"max_latency"`
}

func (c adminConn) conn() Conn {
	out := Conn{
		Addr: endpoint(c.Remote), Interest: c.Interest, Queued: c.Outstanding,
		Received: c.Received, Sent: c.Sent,
	}
	if c.Session != nil {
		out.HasSession, out.Session = true, SessionID(*c.Session)
		out.LastOp = c.LastOp
		out.Established = time.UnixMilli(c.Established)
		out.Timeout = time.Duration(c.Timeout) * time.Millisecond
		out.LastCxid = c.LastCxid
		if c.LastZxid != -1 {
			out.LastZxid = Zxid(c.LastZxid)
		}
		out.LastResponse = c.LastResponse
		out.LastLatency, out.MinLatency, out.AvgLatency, out.MaxLatency = c.LastLatency, c.MinLatency, int64(c.AvgLatency), c.MaxLatency
	}
	return out
}

// WatchesByPath returns the watches_by_path command's map (as wchp).
func (a Admin) WatchesByPath(ctx context.Context) (WatchesByPath, error) {
	var reply watchesByPathReply
	if err := a.Do(ctx, "watches_by_path", &reply); err != nil {
		return nil, err
	}
	return reply.watches(), nil
}

type watchesByPathReply struct {
	Paths map[string][]int64 `json:"path_to_session_ids"`
}

func (r watchesByPathReply) watches() WatchesByPath {
	w := WatchesByPath{}
	for p, ids := range r.Paths {
		w[p] = make([]SessionID, len(ids))
		for i, id := range ids {
			w[p][i] = SessionID(id)
		}
	}
	return w
}

// Watches returns the watches command's map (as wchc).
func (a Admin) Watches(ctx context.Context) (WatchesBySession, error) {
	var reply watchesReply
	if err := a.Do(ctx, "watches", &reply); err != nil {
		return nil, err
	}
	return reply.watches()
}

type watchesReply struct {
	Sessions map[string][]string `json:"session_id_to_watched_paths"`
}

func (r watchesReply) watches() (WatchesBySession, error) {
	w := WatchesBySession{}
	for s, paths := range r.Sessions {
		id, err := ParseSessionID(s)
		if err != nil {
			return nil, fmt.Errorf("fourlw: watches: session %q: %w", s, err)
		}
		w[id] = paths
	}
	return w, nil
}

// WatchSummary returns the watch_summary command's figures (as wchs).
func (a Admin) WatchSummary(ctx context.Context) (WatchSummary, error) {
	var reply struct {
		Connections int `json:"num_connections"`
		Paths       int `json:"num_paths"`
		Watches     int `json:"num_total_watches"`
	}
	err := a.Do(ctx, "watch_summary", &reply)
	return WatchSummary{Connections: reply.Connections, Paths: reply.Paths, Watches: reply.Watches}, err
}

// Dump returns the dump command's sessions and ephemerals (as dump). The
// AdminServer gives expiry times on the server's own clock, so Sessions
// carry only their ids, and it lists no connections.
func (a Admin) Dump(ctx context.Context) (Dump, error) {
	var reply dumpReply
	if err := a.Do(ctx, "dump", &reply); err != nil {
		return Dump{}, err
	}
	return reply.dump()
}

type dumpReply struct {
	Expiry     map[string][]int64  `json:"expiry_time_to_session_ids"`
	Ephemerals map[string][]string `json:"session_id_to_ephemeral_paths"`
}

func (r dumpReply) dump() (Dump, error) {
	d := Dump{Ephemerals: map[SessionID][]string{}}
	for _, ids := range r.Expiry {
		for _, id := range ids {
			d.Sessions = append(d.Sessions, DumpSession{ID: SessionID(id)})
		}
	}
	slices.SortFunc(d.Sessions, func(a, b DumpSession) int { return cmp.Compare(a.ID, b.ID) })
	for s, paths := range r.Ephemerals {
		id, err := ParseSessionID(s)
		if err != nil {
			return d, fmt.Errorf("fourlw: dump: session %q: %w", s, err)
		}
		d.Ephemerals[id] = paths
	}
	return d, nil
}

// Stats returns the stats command's figures (as srvr, with Clients as stat).
func (a Admin) Stats(ctx context.Context) (Stat, error) {
	var reply statsReply
	if err := a.Do(ctx, "stats", &reply); err != nil {
		return Stat{}, err
	}
	return reply.stat()
}

type statsReply struct {
	Version     string `json:"version"`
	NodeCount   int64  `json:"node_count"`
	ServerStats struct {
		Received    int64   `json:"packets_received"`
		Sent        int64   `json:"packets_sent"`
		State       string  `json:"server_state"`
		Outstanding int64   `json:"outstanding_requests"`
		MinLatency  int64   `json:"min_latency"`
		AvgLatency  float64 `json:"avg_latency"`
		MaxLatency  int64   `json:"max_latency"`
		Zxid        int64   `json:"last_processed_zxid"`
		Connections int     `json:"num_alive_client_connections"`
	} `json:"server_stats"`
	Connections []adminConn `json:"connections"`
}

func (reply statsReply) stat() (Stat, error) {
	ss := reply.ServerStats
	st := Stat{
		Version: reply.Version, LatencyMin: ss.MinLatency, LatencyAvg: ss.AvgLatency, LatencyMax: ss.MaxLatency,
		Received: ss.Received, Sent: ss.Sent, Connections: ss.Connections, Outstanding: ss.Outstanding,
		Zxid: Zxid(ss.Zxid), Mode: ss.State, NodeCount: reply.NodeCount,
	}
	for _, c := range reply.Connections {
		st.Clients = append(st.Clients, c.conn())
	}
	if st.Mode == "" {
		return st, errors.New("fourlw: stats: reply has no server_state")
	}
	return st, nil
}

// Configuration returns the configuration command's settings (as conf).
func (a Admin) Configuration(ctx context.Context) (Conf, error) {
	var raw map[string]json.RawMessage
	if err := a.Do(ctx, "configuration", &raw); err != nil {
		return nil, err
	}
	c := Conf{}
	for k, v := range raw {
		if k == "command" || k == "error" {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		c[k] = s
	}
	return c, nil
}
