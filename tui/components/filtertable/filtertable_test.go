package filtertable

import (
	"strings"
	"testing"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/table"
)

func TestRefilter(t *testing.T) {
	names := []string{"alpha", "beta", "gamma", "delta", "ALPHA-2"}
	items := Items{
		N:     len(names),
		Match: func(i int, f string) bool { return strings.Contains(strings.ToLower(names[i]), f) },
		Row:   func(i int) []string { return []string{names[i]} },
	}
	tests := []struct {
		name     string
		filter   string
		keep     string
		cursor   int // before
		want     []int
		selected int
	}{
		{"unfiltered keeps the row", "", "", 2, []int{0, 1, 2, 3, 4}, 2},
		{"unfiltered follows keep", "", "delta", 0, []int{0, 1, 2, 3, 4}, 3},
		{"filter is case-blind", "alpha", "", 0, []int{0, 4}, 0},
		{"filter follows keep", "a", "ALPHA-2", 0, []int{0, 1, 2, 3, 4}, 4},
		{"keep filtered out stays on the row", "ta", "alpha", 1, []int{1, 3}, 3},
		{"nothing matches", "zzz", "", 0, nil, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(common.New(40, 10))
			m.SetColumns([]table.Column{{Title: "name"}})
			m.Refilter(items, nil)
			m.SetCursor(tt.cursor)
			m.SetFilter(tt.filter)
			var keep func(int) bool
			if tt.keep != "" {
				keep = func(i int) bool { return names[i] == tt.keep }
			}
			m.Refilter(items, keep)
			var got []int
			for r := 0; r < m.Shown(); r++ {
				got = append(got, m.Item(r))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("shown %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("shown %v, want %v", got, tt.want)
				}
			}
			sel, ok := m.Selected()
			if !ok {
				sel = -1
			}
			if sel != tt.selected {
				t.Errorf("selected %d, want %d", sel, tt.selected)
			}
			head := m.Heading("Names", "5 names")
			if tt.filter != "" && !strings.Contains(head, "shown, filter") {
				t.Errorf("heading %q does not say a filter is set", head)
			}
		})
	}
}
