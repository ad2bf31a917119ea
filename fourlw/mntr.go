package fourlw

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Mntr is the reply to mntr: every key and value as the server printed
// them ("zk_znode_count" -> "17"). Typed accessors cover the keys zkherd
// uses; Int, Float and Get read any other.
type Mntr map[string]string

// ParseMntr parses the reply to mntr: one "key<TAB>value" line per metric.
func ParseMntr(reply string) (Mntr, error) {
	m := Mntr{}
	for _, line := range strings.Split(reply, "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			return m, fmt.Errorf("fourlw: mntr: line without a tab: %q", abbreviate(line))
		}
		m[k] = v
	}
	if _, ok := m["zk_server_state"]; !ok {
		return m, fmt.Errorf("fourlw: mntr: reply has no zk_server_state: %q", abbreviate(reply))
	}
	return m, nil
}

// Keys returns the keys, sorted.
func (m Mntr) Keys() []string { return slices.Sorted(maps.Keys(m)) }

// Get returns the value of key (such as "zk_version").
func (m Mntr) Get(key string) (string, bool) {
	v, ok := m[key]
	return v, ok
}

// Int returns the value of key as an integer; ok is false when the key is
// missing or not an integer.
func (m Mntr) Int(key string) (int64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, false
		}
		n = int64(f)
	}
	return n, true
}

// Float returns the value of key as a number.
func (m Mntr) Float(key string) (float64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

func (m Mntr) int(key string) int64 {
	n, _ := m.Int(key)
	return n
}

// Accessors for the keys zkherd uses; a missing key reads as zero.

func (m Mntr) Version() string            { return m["zk_version"] }
func (m Mntr) ServerState() string        { return m["zk_server_state"] } // leader, follower, observer, standalone
func (m Mntr) ZnodeCount() int64          { return m.int("zk_znode_count") }
func (m Mntr) WatchCount() int64          { return m.int("zk_watch_count") } // data and child watches
func (m Mntr) EphemeralsCount() int64     { return m.int("zk_ephemerals_count") }
func (m Mntr) NumAliveConnections() int64 { return m.int("zk_num_alive_connections") }
func (m Mntr) OutstandingRequests() int64 { return m.int("zk_outstanding_requests") }
func (m Mntr) PacketsReceived() int64     { return m.int("zk_packets_received") }
func (m Mntr) PacketsSent() int64         { return m.int("zk_packets_sent") }
func (m Mntr) MinLatency() int64          { return m.int("zk_min_latency") } // ms, since start or srst
func (m Mntr) MaxLatency() int64          { return m.int("zk_max_latency") } // ms, since start or srst
func (m Mntr) Uptime() int64              { return m.int("zk_uptime") }      // ms
func (m Mntr) ApproximateDataSize() int64 { return m.int("zk_approximate_data_size") }

// AvgLatency is the mean request latency in ms since start (or srst).
func (m Mntr) AvgLatency() float64 {
	f, _ := m.Float("zk_avg_latency")
	return f
}

// Followers is zk_synced_followers on a leader (0 elsewhere).
func (m Mntr) Followers() int64 { return m.int("zk_synced_followers") }

// Summary metrics count watchers fired per event of one kind: the herd
// effect as the server sees it. Each is a Summary (see Mntr.Summary).
const (
	NodeCreatedWatchCount  = "node_created_watch_count"
	NodeDeletedWatchCount  = "node_deleted_watch_count"
	NodeChangedWatchCount  = "node_changed_watch_count"
	NodeChildrenWatchCount = "node_children_watch_count"
)

// FanOutMetrics lists the four fan-out summaries: the one definition of
// watch fan-out that the load generator, the inspector and Window share.
func FanOutMetrics() []string {
	return []string{NodeCreatedWatchCount, NodeDeletedWatchCount, NodeChangedWatchCount, NodeChildrenWatchCount}
}

// FanOutEvent is the kind of event a fan-out summary counts: created,
// deleted, changed or children.
func FanOutEvent(name string) string {
	return strings.TrimSuffix(strings.TrimPrefix(name, "node_"), "_watch_count")
}

// WatchersNotified is the number of watchers notified since the server
// started, over every fan-out summary (zk_sum_*).
func (m Mntr) WatchersNotified() int64 {
	var n int64
	for _, name := range FanOutMetrics() {
		n += m.int("zk_sum_" + name)
	}
	return n
}

// Latency summaries (ms) of read and write requests; their Count and Sum
// give windowed averages (see WindowOf).
const (
	ReadLatency   = "readlatency"
	UpdateLatency = "updatelatency"
)

// Summary is one of mntr's summary metrics: zk_avg_<name>, zk_min_<name>,
// zk_max_<name>, zk_cnt_<name>, zk_sum_<name>, and for some the
// percentiles zk_p50_<name> ... zk_p999_<name>. All are since the server
// started.
type Summary struct {
	Count, Sum int64
	Avg        float64
	Min, Max   int64
	// Percentiles, when HasPercentiles (a reservoir sample since start).
	HasPercentiles      bool
	P50, P95, P99, P999 float64
}

// Summary returns the summary metric name (such as
// NodeDeletedWatchCount); ok is false when the server has none (before 3.6).
func (m Mntr) Summary(name string) (Summary, bool) {
	cnt, ok := m.Int("zk_cnt_" + name)
	if !ok {
		return Summary{}, false
	}
	s := Summary{Count: cnt}
	s.Sum, _ = m.Int("zk_sum_" + name)
	s.Avg, _ = m.Float("zk_avg_" + name)
	s.Min, _ = m.Int("zk_min_" + name)
	s.Max, _ = m.Int("zk_max_" + name)
	if p50, ok := m.Float("zk_p50_" + name); ok {
		s.HasPercentiles, s.P50 = true, p50
		s.P95, _ = m.Float("zk_p95_" + name)
		s.P99, _ = m.Float("zk_p99_" + name)
		s.P999, _ = m.Float("zk_p999_" + name)
	}
	return s, true
}
