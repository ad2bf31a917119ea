package fourlw

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Server modes as srvr and mntr report them.
const (
	ModeLeader     = "leader"
	ModeFollower   = "follower"
	ModeObserver   = "observer"
	ModeStandalone = "standalone"
	ModeReadOnly   = "read-only"
)

// Stat is the reply to srvr (and stat, which adds Clients).
type Stat struct {
	Version     string
	LatencyMin  int64   // ms, since start or srst
	LatencyAvg  float64 // ms
	LatencyMax  int64   // ms
	Received    int64   // packets
	Sent        int64   // packets
	Connections int
	Outstanding int64 // requests queued
	Zxid        Zxid  // last processed
	Mode        string
	NodeCount   int64
	// Proposal sizes in bytes, leader only (HasProposalSizes).
	HasProposalSizes                                   bool
	LastProposalSize, MinProposalSize, MaxProposalSize int64
	// Clients are stat's connection lines (srvr has none): only Addr,
	// Interest, Queued, Received and Sent are set.
	Clients []Conn
}

// ParseSrvr parses the reply to srvr.
func ParseSrvr(reply string) (Stat, error) { return parseStat("srvr", reply) }

// ParseStat parses the reply to stat.
func ParseStat(reply string) (Stat, error) { return parseStat("stat", reply) }

func parseStat(cmd, reply string) (Stat, error) {
	var st Stat
	var err error
	inClients := false
	for _, line := range strings.Split(reply, "\n") {
		if inClients {
			if strings.TrimSpace(line) == "" {
				inClients = false
				continue
			}
			c, cerr := parseConnLine(line)
			if cerr != nil {
				return st, fmt.Errorf("fourlw: %s: %w", cmd, cerr)
			}
			st.Clients = append(st.Clients, c)
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		field := func(f func() error) {
			if err == nil {
				if e := f(); e != nil {
					err = fmt.Errorf("fourlw: %s: answer not understood: %s %q %w", cmd, key, val, plainNumber(e))
				}
			}
		}
		switch key {
		case "Zookeeper version":
			st.Version = val
		case "Clients":
			inClients = true
		case "Latency min/avg/max":
			field(func() error {
				parts := strings.Split(val, "/")
				if len(parts) != 3 {
					return errors.New("is not min/avg/max")
				}
				var e1, e2, e3 error
				st.LatencyMin, e1 = strconv.ParseInt(parts[0], 10, 64)
				st.LatencyAvg, e2 = strconv.ParseFloat(parts[1], 64)
				st.LatencyMax, e3 = strconv.ParseInt(parts[2], 10, 64)
				return firstErr(e1, e2, e3)
			})
		case "Received":
			field(func() (e error) { st.Received, e = strconv.ParseInt(val, 10, 64); return })
		case "Sent":
			field(func() (e error) { st.Sent, e = strconv.ParseInt(val, 10, 64); return })
		case "Connections":
			field(func() (e error) { st.Connections, e = strconv.Atoi(val); return })
		case "Outstanding":
			field(func() (e error) { st.Outstanding, e = strconv.ParseInt(val, 10, 64); return })
		case "Zxid":
			field(func() error { z, e := parseHex(val); st.Zxid = Zxid(z); return e })
		case "Mode":
			st.Mode = val
		case "Node count":
			field(func() (e error) { st.NodeCount, e = strconv.ParseInt(val, 10, 64); return })
		case "Proposal sizes last/min/max":
			field(func() error {
				parts := strings.Split(val, "/")
				if len(parts) != 3 {
					return errors.New("is not last/min/max")
				}
				var e1, e2, e3 error
				st.LastProposalSize, e1 = strconv.ParseInt(parts[0], 10, 64)
				st.MinProposalSize, e2 = strconv.ParseInt(parts[1], 10, 64)
				st.MaxProposalSize, e3 = strconv.ParseInt(parts[2], 10, 64)
				st.HasProposalSizes = true
				return firstErr(e1, e2, e3)
			})
		}
	}
	if err != nil {
		return st, err
	}
	if st.Mode == "" {
		return st, fmt.Errorf("fourlw: %s: reply has no Mode line: %q", cmd, abbreviate(reply))
	}
	return st, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// abbreviate shortens a reply quoted in an error.
func abbreviate(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
