package metrics

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestLogBuckets(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3) // microseconds
	for i := int64(1); i <= 1000; i++ {
		if err := h.RecordValue(i * 100); err != nil { // 100µs .. 100ms
			t.Fatal(err)
		}
	}
	bs := LogBuckets(h, time.Microsecond)
	var sum int64
	for i, b := range bs {
		sum += b.Count
		if i > 0 && b.UpTo <= bs[i-1].UpTo {
			t.Errorf("buckets out of order: %v", bs)
		}
		if us := b.UpTo / time.Microsecond; us&(us-1) != 0 {
			t.Errorf("bucket bound %v is not a power of two of the unit", b.UpTo)
		}
	}
	if sum != 1000 {
		t.Errorf("buckets hold %d samples, want 1000", sum)
	}
	if got := bs[len(bs)-1].UpTo; got != 131072*time.Microsecond {
		t.Errorf("last bucket up to %v, want 131.072ms (the power of two above 100ms)", got)
	}
	if empty := LogBuckets(hdrhistogram.New(1, 10, 1), time.Microsecond); empty != nil {
		t.Errorf("empty histogram gave %+v", empty)
	}
}

func TestRecorderBucketsAndTimeline(t *testing.T) {
	r, err := NewRecorder(time.Unix(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	s := r.NewShard()
	for i := 1; i <= 100; i++ {
		s.Record(Acquire, time.Duration(i)*time.Millisecond)
	}
	if got := r.Buckets(Acquire); got != nil {
		t.Errorf("buckets before the first rotation: %v, want none", got)
	}
	r.Rotate(r.Start().Add(time.Second))
	var sum int64
	for _, b := range r.Buckets(Acquire) {
		sum += b.Count
	}
	if sum != 100 {
		t.Errorf("buckets hold %d values, want 100", sum)
	}
	tl := r.Timeline()
	if len(tl) != 1 || tl[0].Phases[Acquire].Count != 100 {
		t.Errorf("timeline %+v, want one interval of 100 acquisitions", tl)
	}
}
