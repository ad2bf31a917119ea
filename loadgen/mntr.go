package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// serverCounters are the mntr counters a run compares before and after.
type serverCounters struct {
	packets int64 // zk_packets_received + zk_packets_sent
	fanout  int64 // watchers notified: fourlw's fan-out summaries
	// digests is each member's zk_digest_mismatches_count, -1 where it
	// could not be read (see replicaWarning).
	digests []int64
}

func (a serverCounters) sub(b serverCounters) serverCounters {
	return serverCounters{packets: a.packets - b.packets, fanout: a.fanout - b.fanout}
}

// countersOf picks the run's counters out of one member's mntr reply.
func countersOf(m fourlw.Mntr) (serverCounters, error) {
	recv, ok1 := m.Int("zk_packets_received")
	sent, ok2 := m.Int("zk_packets_sent")
	if !ok1 || !ok2 {
		return serverCounters{}, errors.New("mntr has no zk_packets_received/zk_packets_sent")
	}
	return serverCounters{packets: recv + sent, fanout: m.WatchersNotified()}, nil
}

// readCounters reads mntr from every member at once and sums the counters.
func readCounters(ctx context.Context, members []string, cfg *tls.Config) (serverCounters, error) {
	var (
		mu   sync.Mutex
		sum  serverCounters
		errs []error
		wg   sync.WaitGroup
	)
	sum.digests = make([]int64, len(members))
	for i, addr := range members {
		sum.digests[i] = -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := mntr(ctx, addr, cfg)
			var c serverCounters
			if err == nil {
				c, err = countersOf(m)
			}
			mu.Lock()
			defer mu.Unlock()
			if n, ok := m.Int("zk_digest_mismatches_count"); ok {
				sum.digests[i] = n
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("mntr %s: %w", addr, err))
				return
			}
			sum.packets += c.packets
			sum.fanout += c.fanout
		}()
	}
	wg.Wait()
	return sum, errors.Join(errs...)
}

// mntr asks addr for its mntr counters.
func mntr(ctx context.Context, addr string, cfg *tls.Config) (fourlw.Mntr, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := fourlw.QueryTLS(ctx, addr, string(fourlw.CmdMntr), cfg)
	if err != nil {
		return nil, err
	}
	return fourlw.ParseMntr(reply)
}

// oneLine is a joined error (one line per member, before and after the
// window) as one line for the summary: its distinct lines joined by "; ".
func oneLine(err error) string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}

// replicaWarning reads every member's zk_digest_mismatches_count and
// returns a warning naming the members that counted any, "" when none
// did; seen are the most each member counted when the run polled them
// (seenDigests), since a member restarted by a fault counts from 0 again. A follower compares the digest of its data tree with the one its
// leader sent with each transaction: a mismatch means its copy of the
// data differs from the leader's, a fault of the servers (queue-chaos once
// saw items acknowledged and deleted come back after leader kills, and
// members list different items: docs/RELIABILITY.md), which no recipe
// can cause or mend. Members that cannot be read are left out: the count
// is evidence when present, and its absence proves nothing (a restarted
// member starts again from 0, and servers older than 3.6 have none).
func replicaWarning(ctx context.Context, members []string, cfg *tls.Config, seen []int64) string {
	counts := make([]int64, len(members))
	var wg sync.WaitGroup
	for i, addr := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m, err := mntr(ctx, addr, cfg); err == nil {
				counts[i], _ = m.Int("zk_digest_mismatches_count")
			}
		}()
	}
	wg.Wait()
	for i := range min(len(seen), len(counts)) {
		counts[i] = max(counts[i], seen[i])
	}
	return digestWarning(members, counts)
}

// seenDigests keeps in most the largest of each member's counts in c.
func seenDigests(most []int64, c serverCounters) []int64 {
	if most == nil {
		most = make([]int64, len(c.digests))
	}
	for i := range min(len(most), len(c.digests)) {
		most[i] = max(most[i], c.digests[i])
	}
	return most
}

// digestWarning is replicaWarning's text for each member's count.
func digestWarning(members []string, counts []int64) string {
	var seen []string
	for i, n := range counts {
		if n > 0 {
			seen = append(seen, fmt.Sprintf("%d on %s", n, members[i]))
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return fmt.Sprintf("the servers' copies of the data diverged: zk_digest_mismatches_count %s after the run (a follower's data differed from its leader's; a server fault, which may show as items or nodes lost or back again)",
		strings.Join(seen, ", "))
}

// maxClientCnxns reads maxClientCnxns from every server's conf: its value
// when the servers agree, else an error saying why it is not known.
func maxClientCnxns(ctx context.Context, servers []string, cfg *tls.Config) (string, error) {
	val := ""
	for i, addr := range servers {
		reply, err := fourlw.QueryTLS(ctx, addr, string(fourlw.CmdConf), cfg)
		if err != nil {
			return "", err
		}
		c, err := fourlw.ParseConf(reply)
		if err != nil {
			return "", err
		}
		v, ok := c["maxClientCnxns"]
		if !ok {
			return "", fmt.Errorf("the conf of %s has no maxClientCnxns", addr)
		}
		if i > 0 && v != val {
			return "", fmt.Errorf("the servers differ: maxClientCnxns=%s on %s, %s on %s", val, servers[0], v, addr)
		}
		val = v
	}
	return val, nil
}
