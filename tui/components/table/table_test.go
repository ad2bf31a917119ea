package table

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
)

func TestScrollAndDrawOnlyVisibleRows(t *testing.T) {
	m := New(common.New(30, 6), []Column{{Title: "n", Width: 6, Right: true}, {Title: "name", MinWidth: 5}})
	m.SetSize(30, 6)
	formatted := 0
	m.SetRows(100000, func(i int) []string {
		formatted++
		return []string{fmt.Sprint(i), fmt.Sprintf("row-%d", i)}
	})
	for _, k := range []string{"G", "k", "k"} {
		m, _ = m.Update(tuitest.Key(k))
	}
	out := tuitest.Plain(m.View())
	tuitest.CheckSize(t, out, 30, 6)
	if m.Cursor() != 99997 {
		t.Errorf("cursor = %d, want 99997", m.Cursor())
	}
	if !strings.Contains(out, "row-99999") || strings.Contains(out, "row-0 ") {
		t.Errorf("window does not end at the last row:\n%s", out)
	}
	if formatted > 5 {
		t.Errorf("%d rows formatted for a 5-row window", formatted)
	}
}

func TestClampOnShrink(t *testing.T) {
	m := New(common.New(20, 5), []Column{{Title: "x", MinWidth: 5}})
	m.SetRows(10, func(i int) []string { return []string{fmt.Sprint(i)} })
	m.SetCursor(9)
	m.SetRows(3, func(i int) []string { return []string{fmt.Sprint(i)} })
	if m.Cursor() != 2 || m.Offset() != 0 {
		t.Errorf("cursor %d offset %d after shrinking to 3 rows, want 2 and 0", m.Cursor(), m.Offset())
	}
	m.SetRows(0, nil)
	tuitest.CheckSize(t, tuitest.Plain(m.View()), 20, 5)
}
