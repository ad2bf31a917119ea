package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkherd/zkherd/faultproxy"
)

// Quorum puts a quorum proxy (faultproxy.QuorumProxy) on every member's
// link to every other member's quorum port of a local ensemble, so that
// lag-member can make any follower apply its leader's transactions late.
// Its PeerAddr goes into ensemble.Options.PeerAddr before the ensemble
// starts; the proxies outlive member restarts (a restarted member
// reconnects through them) and close with Close or when ctx ends.
type Quorum struct {
	ctx context.Context

	mu      sync.Mutex
	proxies map[[2]int]*faultproxy.QuorumProxy // by (from, to) member
	lag     map[int]time.Duration              // lag set on each member's links
}

// NewQuorum returns a Quorum whose proxies live until ctx ends or Close.
func NewQuorum(ctx context.Context) *Quorum {
	return &Quorum{ctx: ctx, proxies: make(map[[2]int]*faultproxy.QuorumProxy), lag: make(map[int]time.Duration)}
}

// PeerAddr starts the proxy member from uses to reach member to's quorum
// port addr and returns its address; for ensemble.Options.PeerAddr. A
// second call for the same pair (the ensemble retried on other ports)
// replaces the first proxy.
func (q *Quorum) PeerAddr(from, to int, addr string) (string, error) {
	p, err := faultproxy.NewQuorum(q.ctx, addr)
	if err != nil {
		return "", fmt.Errorf("faults: quorum proxy from member %d to member %d: %w", from, to, err)
	}
	q.mu.Lock()
	old := q.proxies[[2]int{from, to}]
	q.proxies[[2]int{from, to}] = p
	p.SetLag(q.lag[from])
	q.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return p.Addr(), nil
}

// links returns member's proxies to the other members.
func (q *Quorum) links(member int) []*faultproxy.QuorumProxy {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*faultproxy.QuorumProxy
	for k, p := range q.proxies {
		if k[0] == member {
			out = append(out, p)
		}
	}
	return out
}

// Lag makes member apply its leader's transactions d late (0: on time
// again). It acts while the member follows; a leader has no link to lag.
func (q *Quorum) Lag(member int, d time.Duration) error {
	ps := q.links(member)
	if len(ps) == 0 {
		return fmt.Errorf("faults: member %d has no quorum proxy (the ensemble was not started with faults.Quorum's PeerAddr)", member)
	}
	q.mu.Lock()
	q.lag[member] = d
	q.mu.Unlock()
	for _, p := range ps {
		p.SetLag(d)
	}
	return nil
}

// Members lists the members with proxies, sorted.
func (q *Quorum) Members() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	var ids []int
	for k := range q.proxies {
		ids = append(ids, k[0])
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Stats sums up member's proxies' counts.
func (q *Quorum) Stats(member int) faultproxy.QuorumStats {
	var sum faultproxy.QuorumStats
	for _, p := range q.links(member) {
		s := p.Stats()
		sum.Delayed += s.Delayed
		sum.Passed += s.Passed
		sum.Unframed += s.Unframed
		sum.Links += s.Links
	}
	return sum
}

// Close closes every proxy.
func (q *Quorum) Close() error {
	q.mu.Lock()
	ps := make([]*faultproxy.QuorumProxy, 0, len(q.proxies))
	for _, p := range q.proxies {
		ps = append(ps, p)
	}
	q.mu.Unlock()
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
