package scenarios

import (
	"testing"
	"time"
)

func TestParseStages(t *testing.T) {
	got, err := ParseStages("100:30s, 500:30s,1000:1m")
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{{100, 30 * time.Second}, {500, 30 * time.Second}, {1000, time.Minute}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stage %d = %v, want %v", i, got[i], want[i])
		}
	}
	if s := FormatStages(got); s != "100:30s,500:30s,1000:1m0s" {
		t.Errorf("FormatStages = %q", s)
	}
	for _, bad := range []string{"100", "x:30s", "100:30", "100:-1s", "0:10s", "100:30s,"} {
		if _, err := ParseStages(bad); err == nil {
			t.Errorf("ParseStages(%q) = nil error, want one", bad)
		}
	}
	if r := TargetRate(want); r != 650 {
		t.Errorf("TargetRate = %v, want 650 (78,000 operations in 120 s)", r)
	}
}

// TestStagedPacer: each stage's operations at its own rate, one after the
// other; none after the last.
func TestStagedPacer(t *testing.T) {
	p := StagedPacer{Stages: []Stage{{10, 2 * time.Second}, {0, time.Second}, {100, time.Second}}}
	tests := []struct {
		n    uint64
		want time.Duration
	}{
		{0, 0}, {1, 100 * time.Millisecond}, {19, 1900 * time.Millisecond},
		{20, 3 * time.Second}, // the 0-rate stage is a pause
		{21, 3010 * time.Millisecond}, {119, 3990 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := p.Due(tt.n); got != tt.want {
			t.Errorf("Due(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	if _, stop := p.Pace(4*time.Second, 120); !stop {
		t.Errorf("Pace after the last stage's operations: not stopped")
	}
	if w, stop := p.Pace(time.Second, 5); stop || w != 0 {
		t.Errorf("Pace behind schedule = %v, %v; want 0, go", w, stop)
	}
}
