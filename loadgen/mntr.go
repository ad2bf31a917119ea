package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"time"

	"github.com/zkherd/zkherd/fourlw"
)

// serverCounters are the mntr counters a run compares before and after.
type serverCounters struct {
	packets int64 // zk_packets_received + zk_packets_sent
	fanout  int64 // watches triggered: zk_sum_*_watch_count
}

func (a serverCounters) sub(b serverCounters) serverCounters {
	return serverCounters{packets: a.packets - b.packets, fanout: a.fanout - b.fanout}
}

// countersOf picks the run's counters out of one member's mntr output.
func countersOf(m map[string]string) (serverCounters, error) {
	var c serverCounters
	num := func(k string) (int64, bool) {
		v, ok := m[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	recv, ok1 := num("zk_packets_received")
	sent, ok2 := num("zk_packets_sent")
	if !ok1 || !ok2 {
		return c, errors.New("mntr has no zk_packets_received/zk_packets_sent")
	}
	c.packets = recv + sent
	for k := range m {
		if strings.HasPrefix(k, "zk_sum_") && strings.HasSuffix(k, "_watch_count") {
			n, _ := num(k)
			c.fanout += n
		}
	}
	return c, nil
}

// readCounters reads mntr from every member at once and sums the counters.
func readCounters(ctx context.Context, members []string, cfg *tls.Config) (serverCounters, error) {
	var (
		mu   sync.Mutex
		sum  serverCounters
		errs []error
		wg   sync.WaitGroup
	)
	for _, addr := range members {
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
func mntr(ctx context.Context, addr string, cfg *tls.Config) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := fourlw.QueryTLS(ctx, addr, "mntr", cfg)
	if err != nil {
		return nil, err
	}
	return fourlw.ParseMntr(reply)
}
