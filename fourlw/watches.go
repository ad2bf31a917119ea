package fourlw

import (
	"fmt"
	"strconv"
	"strings"
)

// WatchesByPath is the reply to wchp: for each path, the sessions holding
// a data watch on it (exists, getData). Child watches are not listed.
type WatchesByPath map[string][]SessionID

// WatchesBySession is the reply to wchc: for each session, the paths it
// holds a data watch on.
type WatchesBySession map[SessionID][]string

// WatchSummary is the reply to wchs.
type WatchSummary struct {
	Connections int // connections holding watches
	Paths       int // watched paths
	Watches     int // data watches
}

// ParseWchp parses the reply to wchp:
//
//	/path
//		0xsession
func ParseWchp(reply string) (WatchesByPath, error) {
	w := WatchesByPath{}
	err := parseGroups("wchp", reply, func(head, item string) error {
		id, err := ParseSessionID(item)
		if err != nil {
			return err
		}
		w[head] = append(w[head], id)
		return nil
	}, func(head string) error {
		if _, ok := w[head]; !ok {
			w[head] = nil // a path listed with no session yet
		}
		return nil
	})
	return w, err
}

// ParseWchc parses the reply to wchc:
//
//	0xsession
//		/path
func ParseWchc(reply string) (WatchesBySession, error) {
	w := WatchesBySession{}
	var cur SessionID
	err := parseGroups("wchc", reply, func(_, item string) error {
		w[cur] = append(w[cur], item)
		return nil
	}, func(head string) error {
		id, err := ParseSessionID(head)
		if err != nil {
			return err
		}
		cur = id
		if _, ok := w[cur]; !ok {
			w[cur] = nil // a session listed with no path yet
		}
		return nil
	})
	return w, err
}

// parseGroups parses heads at the start of a line followed by items
// indented with a tab, calling head for each head and item for each item.
func parseGroups(cmd, reply string, item func(head, item string) error, head func(string) error) error {
	cur := ""
	for _, line := range strings.Split(reply, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
		case line[0] == '\t':
			if cur == "" {
				return fmt.Errorf("fourlw: %s: item before any heading: %q", cmd, line)
			}
			if err := item(cur, strings.TrimSpace(line)); err != nil {
				return fmt.Errorf("fourlw: %s: %q: %w", cmd, line, err)
			}
		default:
			cur = strings.TrimSpace(line)
			if err := head(cur); err != nil {
				return fmt.Errorf("fourlw: %s: %q: %w", cmd, line, err)
			}
		}
	}
	return nil
}

// ParseWchs parses the reply to wchs:
//
//	3 connections watching 3 paths
//	Total watches:3
func ParseWchs(reply string) (WatchSummary, error) {
	var w WatchSummary
	lines := strings.Split(strings.TrimSpace(reply), "\n")
	if len(lines) < 2 {
		return w, fmt.Errorf("fourlw: wchs: unrecognised reply %q", abbreviate(reply))
	}
	if _, err := fmt.Sscanf(lines[0], "%d connections watching %d paths", &w.Connections, &w.Paths); err != nil {
		return w, fmt.Errorf("fourlw: wchs: answer not understood: %q", abbreviate(lines[0]))
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(lines[1], "Total watches:")))
	if err != nil {
		return w, fmt.Errorf("fourlw: wchs: answer not understood: %q %w", abbreviate(lines[1]), plainNumber(err))
	}
	w.Watches = n
	return w, nil
}
