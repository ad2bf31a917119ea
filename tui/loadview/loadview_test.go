package loadview

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestPhaseFromHistogram(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3) // microseconds
	for i := int64(1); i <= 1000; i++ {
		if err := h.RecordValue(i * 100); err != nil { // 100µs .. 100ms
			t.Fatal(err)
		}
	}
	p := PhaseFromHistogram("acquire", h, time.Microsecond)
	if p.Count != 1000 {
		t.Errorf("count = %d, want 1000", p.Count)
	}
	near := func(got, want time.Duration) bool { return got >= want*99/100 && got <= want*101/100 }
	if !near(p.P50, 50*time.Millisecond) || !near(p.P99, 99*time.Millisecond) || !near(p.Max, 100*time.Millisecond) {
		t.Errorf("p50 %v p99 %v max %v, want about 50ms, 99ms, 100ms", p.P50, p.P99, p.Max)
	}
	var sum int64
	for i, b := range p.Buckets {
		sum += b.Count
		if i > 0 && b.UpTo <= p.Buckets[i-1].UpTo {
			t.Errorf("buckets out of order: %v", p.Buckets)
		}
		if us := b.UpTo / time.Microsecond; us&(us-1) != 0 {
			t.Errorf("bucket bound %v is not a power of two of the unit", b.UpTo)
		}
	}
	if sum != 1000 {
		t.Errorf("buckets hold %d samples, want 1000", sum)
	}
	if empty := PhaseFromHistogram("x", hdrhistogram.New(1, 10, 1), time.Microsecond); empty.Count != 0 || empty.Buckets != nil {
		t.Errorf("empty histogram gave %+v", empty)
	}
}
