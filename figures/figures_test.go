package figures

import (
	"maps"
	"testing"
)

func TestMergeTotals(t *testing.T) {
	a := Totals{Operations: 10, Releases: 10, Wakeups: 12, ZKRequests: 40, ServerPackets: 900, WatchFanout: 30}
	b := Totals{Operations: 5, Releases: 4, Wakeups: 6, ZKRequests: 20, ServerPackets: 950, WatchFanout: 28}
	tests := []struct {
		name  string
		parts []Totals
		want  Totals
	}{
		{"sum, and max for server-wide counts", []Totals{a, b},
			Totals{Operations: 15, Releases: 14, Wakeups: 18, ZKRequests: 60, ServerPackets: 950, WatchFanout: 30}},
		{"a count unknown in one part is unknown", []Totals{a, {Operations: 5, Releases: 4, Wakeups: 6, ZKRequests: 20}},
			Totals{Operations: 15, Releases: 14, Wakeups: 18, ZKRequests: 60}},
		{"no parts", nil, Totals{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MergeTotals(tt.parts...); !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFormulas: wake-ups are per release (not per operation: the
// report's old fallback divided by operations), and a figure over a count
// the servers could not give is unknown, not 0.
func TestFormulas(t *testing.T) {
	tot := Totals{Operations: 100, Releases: 50, Wakeups: 150, ZKRequests: 400}
	tests := []struct {
		key  string
		want float64
	}{
		{WakeupsPerRelease, 3},
		{ZKRequestsPerAcquisition, 4},
		{ServerPacketsPerAcquisition, Unknown},
		{WatchFanoutPerAcquisition, Unknown},
	}
	for _, tt := range tests {
		if got := Get(tot, tt.key); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.key, got, tt.want)
		}
	}
	if got := Get(Totals{Operations: 0, Releases: 0, Wakeups: 0, ZKRequests: 0}, WakeupsPerRelease); got != 0 {
		t.Errorf("no releases: got %v, want 0", got)
	}
}

// TestTableWellFormed: every key unique, every figure labelled and with a
// formula, every count with a merge rule in the list.
func TestTableWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All() {
		if seen[f.Key] || f.Key == "" || f.Label == "" || f.Long == "" || f.Short == "" || f.Value == nil {
			t.Errorf("figure %q: duplicate, or missing a key, a label or a formula", f.Key)
		}
		seen[f.Key] = true
	}
	for _, c := range Counts() {
		if seen[string(c.Count)] {
			t.Errorf("count %q has a figure's name", c.Count)
		}
		seen[string(c.Count)] = true
	}
}

func TestCounter(t *testing.T) {
	var c Counter
	c.Add(Releases, 3)
	c.Add(Releases, 2)
	got := c.Totals()
	if got[Releases] != 5 || c.Get(Releases) != 5 {
		t.Errorf("releases = %d, want 5", got[Releases])
	}
	if _, ok := got[ServerPackets]; ok {
		t.Errorf("server packets are read from the servers, not counted: want absent, got %v", got)
	}
}
