package fourlw

import (
	"testing"
	"time"
)

func TestWindowOf(t *testing.T) {
	prev := Mntr{
		"zk_uptime": "10000", "zk_packets_received": "100", "zk_packets_sent": "110",
		"zk_cnt_readlatency": "50", "zk_sum_readlatency": "100",
		"zk_cnt_updatelatency": "10", "zk_sum_updatelatency": "40",
		"zk_cnt_node_deleted_watch_count": "3", "zk_sum_node_deleted_watch_count": "30",
	}
	cur := Mntr{
		"zk_uptime": "12000", "zk_packets_received": "300", "zk_packets_sent": "510",
		"zk_cnt_readlatency": "150", "zk_sum_readlatency": "200",
		"zk_cnt_updatelatency": "60", "zk_sum_updatelatency": "240",
		"zk_cnt_node_deleted_watch_count": "13", "zk_sum_node_deleted_watch_count": "1030",
	}
	tests := []struct {
		name    string
		prev    Mntr
		cur     Mntr
		elapsed time.Duration
		check   func(t *testing.T, w Window)
	}{
		{"deltas", prev, cur, time.Hour, func(t *testing.T, w Window) {
			if w.Reset || w.Elapsed != 2*time.Second {
				t.Errorf("Reset %v, Elapsed %v; want false, 2s from zk_uptime", w.Reset, w.Elapsed)
			}
			if w.PacketsReceived != 200 || w.PacketsSent != 400 || w.ReceivedPerSecond() != 100 || w.SentPerSecond() != 200 {
				t.Errorf("packets %d/%d, rates %v/%v; want 200/400, 100/200 per s", w.PacketsReceived, w.PacketsSent, w.ReceivedPerSecond(), w.SentPerSecond())
			}
			if w.Reads != 100 || w.Writes != 50 || w.RequestsPerSecond() != 75 {
				t.Errorf("reads %d writes %d rate %v; want 100, 50, 75/s", w.Reads, w.Writes, w.RequestsPerSecond())
			}
			if w.AvgReadLatency() != 1 || w.AvgWriteLatency() != 4 || w.AvgLatency() != 2 {
				t.Errorf("latency read %v write %v all %v; want 1, 4, 2 ms", w.AvgReadLatency(), w.AvgWriteLatency(), w.AvgLatency())
			}
			del := w.FanOut[NodeDeletedWatchCount]
			if del != (FanOut{Events: 10, Watchers: 1000}) || del.PerEvent() != 100 || w.WatchersNotified() != 1000 {
				t.Errorf("deleted fan-out %+v (%v per event), notified %d; want 10 events, 1000 watchers, 100 per event", del, del.PerEvent(), w.WatchersNotified())
			}
		}},
		{"no uptime uses elapsed", Mntr{"zk_packets_received": "1"}, Mntr{"zk_packets_received": "11"}, 5 * time.Second, func(t *testing.T, w Window) {
			if w.Elapsed != 5*time.Second || w.ReceivedPerSecond() != 2 {
				t.Errorf("Elapsed %v, rate %v; want 5s, 2/s", w.Elapsed, w.ReceivedPerSecond())
			}
		}},
		{"restart", cur, Mntr{"zk_uptime": "500", "zk_packets_received": "3"}, time.Second, func(t *testing.T, w Window) {
			if !w.Reset || w.PacketsReceived != 0 {
				t.Errorf("Reset %v, received %d; want a reset window with no figures", w.Reset, w.PacketsReceived)
			}
		}},
		{"srst", Mntr{"zk_packets_received": "300"}, Mntr{"zk_packets_received": "3"}, time.Second, func(t *testing.T, w Window) {
			if !w.Reset {
				t.Error("counters went backwards without a Reset")
			}
		}},
		{"idle", cur, cur, time.Second, func(t *testing.T, w Window) {
			if w.Elapsed != 0 || w.ReceivedPerSecond() != 0 || w.AvgLatency() != 0 || w.FanOut[NodeDeletedWatchCount].PerEvent() != 0 {
				t.Errorf("idle window %+v has figures", w)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, WindowOf(tt.prev, tt.cur, tt.elapsed))
		})
	}
}

func TestWindowAdd(t *testing.T) {
	a := Window{Elapsed: time.Second, PacketsReceived: 10, Reads: 2, ReadLatencySum: 4,
		FanOut: map[string]FanOut{NodeDeletedWatchCount: {Events: 1, Watchers: 5}}}
	b := Window{Elapsed: 2 * time.Second, PacketsReceived: 30, Reads: 2, ReadLatencySum: 8,
		FanOut: map[string]FanOut{NodeDeletedWatchCount: {Events: 1, Watchers: 7}, NodeChildrenWatchCount: {Events: 2, Watchers: 2}}}
	s := a.Add(b)
	if s.Elapsed != 2*time.Second || s.PacketsReceived != 40 || s.Reads != 4 || s.AvgReadLatency() != 3 || s.Reset {
		t.Errorf("sum = %+v", s)
	}
	if got := s.FanOut[NodeDeletedWatchCount]; got != (FanOut{Events: 2, Watchers: 12}) {
		t.Errorf("deleted fan-out %+v, want 2 events 12 watchers", got)
	}
	if got := s.FanOut[NodeChildrenWatchCount]; got != (FanOut{Events: 2, Watchers: 2}) {
		t.Errorf("children fan-out %+v", got)
	}
	if !(Window{}).Add(Window{Reset: true}).Reset {
		t.Error("Add lost Reset")
	}
}

// The captured replies of a leader and a follower: the fan-out of the
// herd lock's release shows in the difference from an idle reply.
func TestWindowOfCaptured(t *testing.T) {
	cur, err := ParseMntr(fixture(t, "mntr_follower.txt"))
	if err != nil {
		t.Fatal(err)
	}
	prev := Mntr{}
	for k, v := range cur {
		prev[k] = v
	}
	prev["zk_cnt_node_deleted_watch_count"] = "0"
	prev["zk_sum_node_deleted_watch_count"] = "0"
	w := WindowOf(prev, cur, time.Second)
	if got := w.FanOut[NodeDeletedWatchCount]; got != (FanOut{Events: 1, Watchers: 2}) {
		t.Errorf("deleted fan-out %+v, want the herd release: 1 event, 2 watchers on this member", got)
	}
}
