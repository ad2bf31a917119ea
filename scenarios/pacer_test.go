package scenarios

import (
	"math"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestConstantPacer(t *testing.T) {
	tests := []struct {
		name     string
		pacer    ConstantPacer
		elapsed  time.Duration
		done     uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"first at once", ConstantPacer{Rate: 10}, 0, 0, 0, false},
		{"second waits a period", ConstantPacer{Rate: 10}, 0, 1, 100 * ms, false},
		{"on schedule", ConstantPacer{Rate: 10}, 250 * ms, 3, 50 * ms, false},
		{"behind schedule", ConstantPacer{Rate: 10}, time.Second, 3, 0, false},
		{"ahead of schedule", ConstantPacer{Rate: 10}, 100 * ms, 5, 400 * ms, false},
		{"fractional rate", ConstantPacer{Rate: 0.5}, 0, 1, 2 * time.Second, false},
		{"high rate", ConstantPacer{Rate: 1e6}, 0, 3, 3 * time.Microsecond, false},
		{"ops limit", ConstantPacer{Rate: 10, Limit: Limit{Ops: 5}}, 0, 5, 0, true},
		{"below ops limit", ConstantPacer{Rate: 10, Limit: Limit{Ops: 5}}, 0, 4, 400 * ms, false},
		{"duration over", ConstantPacer{Rate: 10, Limit: Limit{Duration: time.Second}}, time.Second, 3, 0, true},
		{"next due after the end", ConstantPacer{Rate: 10, Limit: Limit{Duration: time.Second}}, 950 * ms, 10, 0, true},
		{"last one before the end", ConstantPacer{Rate: 10, Limit: Limit{Duration: time.Second}}, 850 * ms, 9, 50 * ms, false},
		{"zero rate", ConstantPacer{}, 0, 0, 0, true},
		{"negative rate", ConstantPacer{Rate: -1}, 0, 0, 0, true},
		{"huge count saturates", ConstantPacer{Rate: 1e-9}, 0, math.MaxUint64, math.MaxInt64, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, stop := tt.pacer.Pace(tt.elapsed, tt.done)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tt.elapsed, tt.done, wait, stop, tt.wantWait, tt.wantStop)
			}
		})
	}
}

func TestConstantPacerDue(t *testing.T) {
	p := ConstantPacer{Rate: 4}
	for n, want := range []time.Duration{0, 250 * ms, 500 * ms, 750 * ms, time.Second} {
		if got := p.Due(uint64(n)); got != want {
			t.Errorf("Due(%d) = %v, want %v", n, got, want)
		}
	}
}

// Simulating a dispatcher with a fake clock: the pacer alone decides the
// schedule, so the number started by any instant is rate x elapsed.
func TestConstantPacerSimulated(t *testing.T) {
	p := ConstantPacer{Rate: 200, Limit: Limit{Duration: 2 * time.Second}}
	var now time.Duration
	var done uint64
	for {
		wait, stop := p.Pace(now, done)
		if stop {
			break
		}
		now += wait
		done++
	}
	if done != 400 {
		t.Errorf("started %d operations in 2s at 200/s, want 400", done)
	}
}

func TestPoissonPacer(t *testing.T) {
	const rate = 1000.0
	p := NewPoissonPacer(rate, 42, Limit{})
	q := NewPoissonPacer(rate, 42, Limit{})
	other := NewPoissonPacer(rate, 43, Limit{})

	// Same seed, same schedule; another seed, another schedule.
	same, differ := true, false
	var prev time.Duration
	for n := uint64(0); n < 1000; n++ {
		a, b, c := p.Due(n), q.Due(n), other.Due(n)
		same = same && a == b
		differ = differ || a != c
		if n > 0 && a < prev {
			t.Fatalf("Due(%d) = %v is before Due(%d) = %v", n, a, n-1, prev)
		}
		prev = a
	}
	if !same {
		t.Error("two pacers with seed 42 gave different schedules")
	}
	if !differ {
		t.Error("seeds 42 and 43 gave the same schedule")
	}

	// Asking again for an earlier operation redraws the same times.
	if a, b := p.Due(10), q.Due(10); a != b {
		t.Errorf("Due(10) after Due(999) = %v, want %v", a, b)
	}

	// The mean gap over many draws is 1/rate (within 5%; the standard error
	// of the mean of 100,000 exponential gaps is 0.3%).
	const n = 100_000
	mean := float64(p.Due(n)) / n
	if want := float64(time.Second) / rate; math.Abs(mean-want)/want > 0.05 {
		t.Errorf("mean gap %v, want %v", time.Duration(mean), time.Duration(want))
	}
}

func TestPoissonPacerPace(t *testing.T) {
	ref := NewPoissonPacer(100, 7, Limit{})
	due3 := ref.Due(3)
	tests := []struct {
		name     string
		pacer    *PoissonPacer
		elapsed  time.Duration
		done     uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"wait until due", NewPoissonPacer(100, 7, Limit{}), 0, 3, due3, false},
		{"behind schedule", NewPoissonPacer(100, 7, Limit{}), due3 + ms, 3, 0, false},
		{"partly waited", NewPoissonPacer(100, 7, Limit{}), due3 / 2, 3, due3 - due3/2, false},
		{"ops limit", NewPoissonPacer(100, 7, Limit{Ops: 3}), 0, 3, 0, true},
		{"due after the end", NewPoissonPacer(100, 7, Limit{Duration: due3}), 0, 3, 0, true},
		{"zero rate", NewPoissonPacer(0, 7, Limit{}), 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, stop := tt.pacer.Pace(tt.elapsed, tt.done)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tt.elapsed, tt.done, wait, stop, tt.wantWait, tt.wantStop)
			}
		})
	}
}

func TestClosedPacer(t *testing.T) {
	tests := []struct {
		name     string
		pacer    ClosedPacer
		elapsed  time.Duration
		done     uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"no think time", ClosedPacer{}, time.Second, 10, 0, false},
		{"think time", ClosedPacer{Think: 5 * ms}, time.Second, 10, 5 * ms, false},
		{"duration over", ClosedPacer{Think: 5 * ms, Limit: Limit{Duration: time.Second}}, time.Second, 10, 0, true},
		{"ops reached", ClosedPacer{Limit: Limit{Ops: 10}}, 0, 10, 0, true},
		{"both limits, neither reached", ClosedPacer{Think: ms, Limit: Limit{Ops: 10, Duration: time.Second}}, 999 * ms, 9, ms, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, stop := tt.pacer.Pace(tt.elapsed, tt.done)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tt.elapsed, tt.done, wait, stop, tt.wantWait, tt.wantStop)
			}
		})
	}
}

func TestRamp(t *testing.T) {
	r := Ramp{Rate: 100, Clients: 5}
	tests := []struct {
		name     string
		elapsed  time.Duration
		opened   uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"first at once", 0, 0, 0, false},
		{"second after 10ms", 0, 1, 10 * ms, false},
		{"on time", 15 * ms, 2, 5 * ms, false},
		{"late", time.Second, 4, 0, false},
		{"all open", 0, 5, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, stop := r.Pace(tt.elapsed, tt.opened)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tt.elapsed, tt.opened, wait, stop, tt.wantWait, tt.wantStop)
			}
		})
	}
	if got := r.Done(); got != 40*ms {
		t.Errorf("Done() = %v, want 40ms", got)
	}
	if got := (Ramp{Clients: 1000}).Done(); got != 0 {
		t.Errorf("Done() with no rate = %v, want 0 (all at once)", got)
	}
}

func TestFirstStart(t *testing.T) {
	ramp := Ramp{Rate: 10, Clients: 4} // sessions at 0, 100, 200, 300 ms
	tests := []struct {
		kind   ArrivalKind
		client int
		want   time.Duration
	}{
		{Closed, 0, 0},
		{Closed, 2, 200 * ms},
		{Stampede, 0, 300 * ms},
		{Stampede, 3, 300 * ms},
		{Constant, 1, 300 * ms},
	}
	for _, tt := range tests {
		if got := FirstStart(tt.kind, ramp, tt.client); got != tt.want {
			t.Errorf("FirstStart(%s, client %d) = %v, want %v", tt.kind, tt.client, got, tt.want)
		}
	}
}

func TestPacerFor(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"constant", Spec{Recipe: FairLock, Arrival: Arrival{Kind: Constant, Rate: 5}}, "scenarios.ConstantPacer"},
		{"poisson", Spec{Recipe: FairLock, Arrival: Arrival{Kind: Poisson, Rate: 5}}, "*scenarios.PoissonPacer"},
		{"closed", Spec{Recipe: FairLock}, "scenarios.ClosedPacer"},
		{"stampede", Spec{Recipe: FairLock, Arrival: Arrival{Kind: Stampede, ThinkTime: ms}}, "scenarios.ClosedPacer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.spec.Runs()[0]
			p := PacerFor(r)
			if got := typeName(p); got != tt.want {
				t.Errorf("PacerFor = %s, want %s", got, tt.want)
			}
			// Every pacer honours the run's duration.
			if _, stop := p.Pace(r.Duration, 0); !stop {
				t.Errorf("Pace(duration %v, 0) does not stop", r.Duration)
			}
		})
	}
}
