package sparkline

import "testing"

func TestRender(t *testing.T) {
	tests := []struct {
		name   string
		series []float64
		width  int
		max    float64
		want   string
	}{
		{"scaled to the largest", []float64{0, 1, 2, 4, 8}, 5, 0, "▁▁▂▄█"},
		{"short history padded on the left", []float64{8, 8}, 4, 0, "  ██"},
		{"long history keeps the tail", []float64{8, 0, 0, 8}, 2, 0, "▁█"},
		{"fixed scale", []float64{1, 2}, 2, 16, "▁▁"},
		{"empty", nil, 3, 0, "   "},
		{"no width", []float64{1}, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.series, tt.width, tt.max); got != tt.want {
				t.Errorf("Render(%v, %d, %v) = %q, want %q", tt.series, tt.width, tt.max, got, tt.want)
			}
		})
	}
}
