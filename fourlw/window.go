package fourlw

import "time"

// Window holds what a server did between two mntr replies: mntr's own
// averages and percentiles are since the server started, so live figures
// come from differences. Windows of several members add up (Add) into the
// ensemble's.
type Window struct {
	// Elapsed is the time between the two replies, from the servers'
	// zk_uptime when they have it.
	Elapsed time.Duration
	// Reset is set when a counter went backwards (the server restarted, or
	// someone ran srst): the other figures are then zero.
	Reset bool

	PacketsReceived int64
	PacketsSent     int64
	// Reads and Writes count completed requests; their latency sums are
	// in ms.
	Reads, Writes                   int64
	ReadLatencySum, WriteLatencySum int64
	// FanOut is, per FanOutMetrics name, the events fired and watchers
	// notified: the herd effect inside the window.
	FanOut map[string]FanOut
}

// FanOut counts watch notifications of one kind of event.
type FanOut struct {
	Events   int64 // events that fired watches
	Watchers int64 // watchers notified in all
}

// PerEvent is the mean number of watchers notified per event, 0 without
// events.
func (f FanOut) PerEvent() float64 {
	if f.Events == 0 {
		return 0
	}
	return float64(f.Watchers) / float64(f.Events)
}

// WindowOf returns the differences between two mntr replies of one server,
// prev taken elapsed before cur (used when the replies lack zk_uptime).
func WindowOf(prev, cur Mntr, elapsed time.Duration) Window {
	w := Window{Elapsed: elapsed, FanOut: map[string]FanOut{}}
	if up0, ok0 := prev.Int("zk_uptime"); ok0 {
		if up1, ok1 := cur.Int("zk_uptime"); ok1 {
			if up1 < up0 {
				return Window{Elapsed: elapsed, Reset: true}
			}
			w.Elapsed = time.Duration(up1-up0) * time.Millisecond
		}
	}
	reset := false
	delta := func(key string) int64 {
		a, _ := prev.Int(key)
		b, _ := cur.Int(key)
		if b < a {
			reset = true
		}
		return b - a
	}
	w.PacketsReceived = delta("zk_packets_received")
	w.PacketsSent = delta("zk_packets_sent")
	w.Reads = delta("zk_cnt_" + ReadLatency)
	w.ReadLatencySum = delta("zk_sum_" + ReadLatency)
	w.Writes = delta("zk_cnt_" + UpdateLatency)
	w.WriteLatencySum = delta("zk_sum_" + UpdateLatency)
	for _, name := range FanOutMetrics() {
		w.FanOut[name] = FanOut{Events: delta("zk_cnt_" + name), Watchers: delta("zk_sum_" + name)}
	}
	if reset {
		return Window{Elapsed: w.Elapsed, Reset: true}
	}
	return w
}

// Add returns the sum of two windows (of different members over about the
// same time): counts add up, Elapsed is the longer, Reset is either's.
func (w Window) Add(o Window) Window {
	sum := Window{
		Elapsed:         max(w.Elapsed, o.Elapsed),
		Reset:           w.Reset || o.Reset,
		PacketsReceived: w.PacketsReceived + o.PacketsReceived,
		PacketsSent:     w.PacketsSent + o.PacketsSent,
		Reads:           w.Reads + o.Reads,
		Writes:          w.Writes + o.Writes,
		ReadLatencySum:  w.ReadLatencySum + o.ReadLatencySum,
		WriteLatencySum: w.WriteLatencySum + o.WriteLatencySum,
		FanOut:          map[string]FanOut{},
	}
	for _, m := range []map[string]FanOut{w.FanOut, o.FanOut} {
		for k, f := range m {
			s := sum.FanOut[k]
			sum.FanOut[k] = FanOut{Events: s.Events + f.Events, Watchers: s.Watchers + f.Watchers}
		}
	}
	return sum
}

func (w Window) perSecond(n int64) float64 {
	if w.Elapsed <= 0 {
		return 0
	}
	return float64(n) / w.Elapsed.Seconds()
}

// ReceivedPerSecond is the rate of packets received.
func (w Window) ReceivedPerSecond() float64 { return w.perSecond(w.PacketsReceived) }

// SentPerSecond is the rate of packets sent.
func (w Window) SentPerSecond() float64 { return w.perSecond(w.PacketsSent) }

// RequestsPerSecond is the rate of completed reads and writes.
func (w Window) RequestsPerSecond() float64 { return w.perSecond(w.Reads + w.Writes) }

// AvgLatency is the mean request latency in the window, in ms.
func (w Window) AvgLatency() float64 {
	return ratio(w.ReadLatencySum+w.WriteLatencySum, w.Reads+w.Writes)
}

// AvgReadLatency is the mean read latency in the window, in ms.
func (w Window) AvgReadLatency() float64 { return ratio(w.ReadLatencySum, w.Reads) }

// AvgWriteLatency is the mean write latency in the window, in ms.
func (w Window) AvgWriteLatency() float64 { return ratio(w.WriteLatencySum, w.Writes) }

// WatchersNotified is the number of watchers notified, of all kinds.
func (w Window) WatchersNotified() int64 {
	var n int64
	for _, f := range w.FanOut {
		n += f.Watchers
	}
	return n
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
