package fourlw

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Dump is the reply to dump (or the AdminServer's dump).
type Dump struct {
	// Sessions the server tracks. A leader or standalone server lists
	// every session of the ensemble by expiry time (Expires set); a
	// follower lists them with their timeouts (Timeout set).
	Sessions []DumpSession
	// Ephemerals are the ephemeral nodes of each session that owns any
	// (every member reports all of them).
	Ephemerals map[SessionID][]string
	// Connections are this server's connections and their sessions
	// (Session 0: a connection without a session yet, such as ours).
	Connections []DumpConn
}

// DumpSession is one session in dump's session tracker section.
type DumpSession struct {
	ID      SessionID
	Timeout time.Duration // follower's list
	Expires time.Time     // leader's and standalone's expiry sets (server time, second resolution)
}

// DumpConn is one line of dump's connections section.
type DumpConn struct {
	Addr    string
	Session SessionID
}

// javaDate is java.util.Date's toString layout.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

// ParseDump parses the reply to dump.
func ParseDump(reply string) (Dump, error) {
	d := Dump{Ephemerals: map[SessionID][]string{}}
	section := ""
	var expires time.Time
	var owner SessionID
	for _, line := range strings.Split(reply, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case line == "SessionTracker dump:":
			section = "sessions"
			continue
		case line == "ephemeral nodes dump:":
			section = "ephemerals"
			continue
		case line == "Connections dump:":
			section = "connections"
			continue
		case strings.HasPrefix(line, "Session Sets ("), strings.HasPrefix(line, "Global Sessions("),
			strings.HasPrefix(line, "Sessions with Ephemerals ("), strings.HasPrefix(line, "Connections Sets ("),
			strings.HasPrefix(line, "Local Sessions("):
			continue
		}
		var err error
		switch section {
		case "sessions":
			switch {
			case line[0] == '\t': // a session of the current expiry set
				var id SessionID
				if id, err = ParseSessionID(trimmed); err == nil {
					d.Sessions = append(d.Sessions, DumpSession{ID: id, Expires: expires})
				}
			case strings.Contains(line, " expire at "): // "16 expire at Sat Nov 21 04:52:16 UTC 2026:"
				_, when, _ := strings.Cut(strings.TrimSuffix(line, ":"), " expire at ")
				expires, _ = time.Parse(javaDate, when)
			default: // follower: "0x1000001f3b60000<TAB>4000ms"
				idText, to, ok := strings.Cut(line, "\t")
				if !ok {
					err = fmt.Errorf("unrecognised session line")
					break
				}
				var id SessionID
				var ms int64
				if id, err = ParseSessionID(idText); err == nil {
					if ms, err = strconv.ParseInt(strings.TrimSuffix(to, "ms"), 10, 64); err == nil {
						d.Sessions = append(d.Sessions, DumpSession{ID: id, Timeout: time.Duration(ms) * time.Millisecond})
					}
				}
			}
		case "ephemerals":
			if line[0] == '\t' {
				d.Ephemerals[owner] = append(d.Ephemerals[owner], trimmed)
			} else if owner, err = ParseSessionID(strings.TrimSuffix(trimmed, ":")); err == nil {
				if _, ok := d.Ephemerals[owner]; !ok {
					d.Ephemerals[owner] = nil // a session listed with no ephemeral yet
				}
			}
		case "connections":
			// "<TAB>ip: /127.0.0.1:53764 sessionId: 0x3000001f3e70001"
			if line[0] != '\t' {
				continue // an expiry set heading
			}
			rest, ok := strings.CutPrefix(trimmed, "ip: ")
			addr, sid, ok2 := strings.Cut(rest, " sessionId: ")
			if !ok || !ok2 {
				err = fmt.Errorf("unrecognised connection line")
				break
			}
			var id SessionID
			if id, err = ParseSessionID(sid); err == nil {
				d.Connections = append(d.Connections, DumpConn{Addr: endpoint(addr), Session: id})
			}
		default:
			err = fmt.Errorf("line outside any section")
		}
		if err != nil {
			return d, fmt.Errorf("fourlw: dump: %q: %w", abbreviate(line), err)
		}
	}
	if section == "" {
		return d, fmt.Errorf("fourlw: dump: unrecognised reply %q", abbreviate(reply))
	}
	return d, nil
}

// Owner returns the session owning the ephemeral node at path, from the
// dump's ephemerals.
func (d Dump) Owner(path string) (SessionID, bool) {
	for s, paths := range d.Ephemerals {
		for _, p := range paths {
			if p == path {
				return s, true
			}
		}
	}
	return 0, false
}
