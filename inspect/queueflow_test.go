package inspect

import (
	"testing"
	"time"
)

func TestItemFlow(t *testing.T) {
	tests := []struct {
		name          string
		prev, cur     []int64
		arrived, left int64
	}{
		{"first listing", nil, []int64{1, 2, 3}, 3, 0},
		{"head consumed, tail grown", []int64{1, 2, 3}, []int64{3, 4, 5, 6}, 3, 2},
		{"drained", []int64{7, 8}, nil, 0, 2},
		{"unchanged", []int64{4, 5}, []int64{4, 5}, 0, 0},
		{"sequence gaps (helper nodes)", []int64{10, 20, 30}, []int64{30, 50, 70}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, l := itemFlow(tt.prev, tt.cur)
			if a != tt.arrived || l != tt.left {
				t.Errorf("itemFlow = %d arrived, %d left; want %d, %d", a, l, tt.arrived, tt.left)
			}
		})
	}
}

// TestQueueRates: a queue fed 100 items/s and drained 80 items/s, listed
// once a second, reads those rates although its sequence numbers advance by
// three per item (a recipe's helper nodes count too).
func TestQueueRates(t *testing.T) {
	rec := &queueRec{}
	start := time.Unix(1000, 0)
	var items []int64
	next, head := int64(0), 0
	var enq, deq float64
	for s := 0; s <= 10; s++ {
		for range 100 {
			items = append(items, next)
			next += 3
		}
		if s > 0 {
			head += 80
		}
		enq, deq = rec.flow(append([]int64(nil), items[head:]...), start.Add(time.Duration(s)*time.Second))
	}
	if enq < 99 || enq > 101 || deq < 79 || deq > 81 {
		t.Errorf("rates %.1f/s in, %.1f/s out; want 100 and 80", enq, deq)
	}
	if n := len(rec.samples); n > 7 {
		t.Errorf("%d samples kept, want the %v window's worth", n, rateWindow)
	}
}
