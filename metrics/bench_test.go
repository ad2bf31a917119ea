package metrics

import (
	"math/rand/v2"
	"testing"
	"time"
)

func latencies(n int) []time.Duration {
	rng := rand.New(rand.NewPCG(3, 5))
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration(rng.ExpFloat64()*2000+100) * time.Microsecond
	}
	return d
}

// rotateEvery is how many values the benchmarks record per interval.
const rotateEvery = 4096

// BenchmarkRecord measures the hot path: one worker recording into its
// shard, 4096 values per interval; the rotations are not timed.
func BenchmarkRecord(b *testing.B) {
	r := newTestRecorder(b)
	s := r.NewShard()
	d := latencies(rotateEvery)
	for _, v := range d { // grow the buffers once, as a running worker has
		s.Record(Acquire, v)
	}
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%rotateEvery == 0 {
			b.StopTimer()
			now = now.Add(time.Second)
			r.Rotate(now)
			b.StartTimer()
		}
		s.Record(Acquire, d[i%rotateEvery])
	}
}

// BenchmarkRecordCorrected measures the worker's cost of a corrected record
// of a 20ms latency paced at 1ms.
func BenchmarkRecordCorrected(b *testing.B) {
	r := newTestRecorder(b)
	s := r.NewShard()
	for range rotateEvery {
		s.RecordCorrected(Acquire, 20*time.Millisecond, time.Millisecond)
	}
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%rotateEvery == 0 {
			b.StopTimer()
			now = now.Add(time.Second)
			r.Rotate(now)
			b.StartTimer()
		}
		s.RecordCorrected(Acquire, 20*time.Millisecond, time.Millisecond)
	}
}

// BenchmarkRecordSpilling measures recording when nobody rotates, so the
// shard's buffers keep spilling into its own sparse histograms.
func BenchmarkRecordSpilling(b *testing.B) {
	r := newTestRecorder(b)
	s := r.NewShard()
	d := latencies(rotateEvery)
	for range 4 {
		for _, v := range d {
			s.Record(Acquire, v)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Record(Acquire, d[i%rotateEvery])
	}
}

// BenchmarkRecordParallel has every goroutine record into its own shard
// while another goroutine rotates every 100ms (ten times as often as a run
// does), all timed: the rotations' cost per value is included.
func BenchmarkRecordParallel(b *testing.B) {
	r := newTestRecorder(b)
	d := latencies(rotateEvery)
	stop := make(chan struct{})
	rotated := make(chan struct{})
	go func() {
		defer close(rotated)
		now := t0
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				now = now.Add(time.Second)
				r.Rotate(now)
			}
		}
	}()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := r.NewShard()
		for i := 0; pb.Next(); i++ {
			s.Record(Acquire, d[i%rotateEvery])
		}
	})
	close(stop)
	<-rotated
}

// BenchmarkRotate measures one rotation: every shard recorded perPhase values
// in each of phases phases during the interval (not timed).
func BenchmarkRotate(b *testing.B) {
	tests := []struct {
		name                     string
		shards, phases, perPhase int
	}{
		{"1 shard x 1 phase x 100", 1, 1, 100},
		{"64 shards x 12 phases x 100", 64, 12, 100},
		{"10000 shards x 9 phases x 1", 10000, 9, 1},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			r := newTestRecorder(b)
			ss := make([]*Shard, tt.shards)
			for i := range ss {
				ss[i] = r.NewShard()
			}
			phases := Phases()[:tt.phases]
			d := latencies(4096)
			fill := func() {
				for i, s := range ss {
					for k, p := range phases {
						for j := range tt.perPhase {
							s.Record(p, d[(i*tt.perPhase+j+k)%len(d)])
						}
					}
				}
			}
			now := t0
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				fill()
				now = now.Add(time.Second)
				b.StartTimer()
				r.Rotate(now)
			}
		})
	}
}
