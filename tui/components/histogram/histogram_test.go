package histogram

import (
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/loadview"
)

func TestRenderFillsGaps(t *testing.T) {
	bs := []loadview.Bucket{{UpTo: time.Millisecond, Count: 10}, {UpTo: 8 * time.Millisecond, Count: 5}}
	rows := Render(bs, 40, 10)
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4 (1, 2, 4, 8 ms):\n%s", len(rows), strings.Join(rows, "\n"))
	}
	if !strings.Contains(rows[1], "≤2.00ms") || !strings.HasSuffix(rows[1], " 0") {
		t.Errorf("row 2 = %q, want an empty ≤2.00ms bucket", rows[1])
	}
	for _, r := range rows {
		if w := common.Width(r); w != 40 {
			t.Errorf("row %q is %d wide, want 40", r, w)
		}
	}
}

func TestRenderMergesToFit(t *testing.T) {
	var bs []loadview.Bucket
	for up := time.Microsecond; up < 2*time.Second; up *= 2 {
		bs = append(bs, loadview.Bucket{UpTo: up, Count: 1})
	}
	rows := Render(bs, 40, 5)
	if len(rows) > 5 {
		t.Errorf("%d rows, want at most 5", len(rows))
	}
	var total int64
	for _, r := range rows {
		f := strings.Fields(r)
		total += int64(atoi(f[len(f)-1]))
	}
	if total != int64(len(bs)) {
		t.Errorf("merged rows count %d samples, want %d", total, len(bs))
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
}

func TestSpectrum(t *testing.T) {
	p := loadview.Phase{Name: "acquire", Count: 10, P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 10 * time.Millisecond, P999: 50 * time.Millisecond, Max: 100 * time.Millisecond}
	rows := Spectrum(p, 40, 5)
	if len(rows) != 5 || !strings.HasPrefix(rows[0], "p50") || !strings.HasPrefix(rows[4], "max") {
		t.Fatalf("rows = %q", rows)
	}
	bars := func(r string) int { return strings.Count(r, "█") }
	if bars(rows[0]) >= bars(rows[4]) {
		t.Errorf("p50 bar (%d) not shorter than max bar (%d)", bars(rows[0]), bars(rows[4]))
	}
	if rows := Spectrum(p, 40, 3); len(rows) != 3 || !strings.HasPrefix(rows[2], "max") {
		t.Errorf("3 rows = %q, want the max kept last", rows)
	}
}
