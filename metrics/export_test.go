package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// fixedResult builds a small, fully deterministic run: three intervals of
// acquire and hold, the acquires corrected for a 1ms pacing.
func fixedResult(t *testing.T) *Result {
	t.Helper()
	r := newTestRecorder(t)
	a, b := r.NewShard(), r.NewShard()
	for sec := range 3 {
		for i := range 200 {
			d := time.Duration(200+i*7+sec*50) * time.Microsecond
			if i%50 == 0 {
				d = time.Duration(10+sec) * time.Millisecond
			}
			a.RecordCorrected(Acquire, d, time.Millisecond)
			b.Record(Hold, time.Duration(i%10+1)*time.Millisecond)
		}
		r.Rotate(t0.Add(time.Duration(sec+1) * time.Second))
	}
	return r.Finish(t0.Add(3 * time.Second))
}

func TestWriteHgrm(t *testing.T) {
	res := fixedResult(t)
	empty := reference(DefaultHighest)
	tests := []struct {
		name  string
		write func(w io.Writer) error
	}{
		{"acquire", func(w io.Writer) error { return res.WriteHgrm(w, Acquire, false) }},
		{"acquire_corrected", func(w io.Writer) error { return res.WriteHgrm(w, Acquire, true) }},
		{"hold", func(w io.Writer) error { return res.WriteHgrm(w, Hold, false) }},
		{"empty", func(w io.Writer) error { return WriteHgrm(w, empty) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf); err != nil {
				t.Fatalf("write: %v", err)
			}
			checkGolden(t, buf.Bytes())
		})
	}
	t.Run("unknown phase", func(t *testing.T) {
		err := res.WriteHgrm(io.Discard, Dequeue, false)
		if !errors.Is(err, ErrNoPhase) {
			t.Errorf("got %v, want ErrNoPhase", err)
		}
	})
}

// TestHgrmAgreesWithLibrary checks the table against the library's own
// PercentilesPrint, which prints the same iteration in another layout.
func TestHgrmAgreesWithLibrary(t *testing.T) {
	h := fixedResult(t).Totals[Acquire].Corrected
	var ours, lib bytes.Buffer
	if err := WriteHgrm(&ours, h); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PercentilesPrint(&lib, TicksPerHalfDistance, 1000); err != nil {
		t.Fatal(err)
	}
	a, b := hgrmRows(t, &ours), hgrmRows(t, &lib)
	if len(a) != len(b) {
		t.Fatalf("rows: got %d, library printed %d", len(a), len(b))
	}
	for i := range a {
		for j := range 3 {
			if math.Abs(a[i][j]-b[i][j]) > 1e-6 {
				t.Errorf("row %d column %d: got %v, library %v", i, j, a[i][j], b[i][j])
			}
		}
	}
}

func hgrmRows(t *testing.T, r io.Reader) [][3]float64 {
	t.Helper()
	var rows [][3]float64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || strings.HasPrefix(f[0], "#") || f[0] == "Value" {
			continue
		}
		var row [3]float64
		for j := range 3 {
			v, err := strconv.ParseFloat(f[j], 64)
			if err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	return rows
}

func TestHlogRoundTrip(t *testing.T) {
	res := fixedResult(t)
	tests := []struct {
		phase    Phase
		wantTags []string
	}{
		{Acquire, []string{"acquire", "acquire_corrected", "acquire", "acquire_corrected", "acquire", "acquire_corrected"}},
		{Hold, []string{"hold", "hold", "hold"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			var buf bytes.Buffer
			if err := res.WriteHlog(&buf, tt.phase); err != nil {
				t.Fatalf("WriteHlog: %v", err)
			}
			rd := hdrhistogram.NewHistogramLogReader(&buf)
			raw := reference(DefaultHighest)
			corr := reference(DefaultHighest)
			var tags []string
			for i := 0; ; i++ {
				h, err := rd.NextIntervalHistogram()
				if err != nil {
					t.Fatalf("reading interval %d: %v", i, err)
				}
				if h == nil {
					break
				}
				tags = append(tags, h.Tag())
				wantStart := t0.Add(time.Duration(i/(len(tt.wantTags)/3)) * time.Second).UnixMilli()
				if h.StartTimeMs() != wantStart {
					t.Errorf("interval %d start: got %d, want %d", i, h.StartTimeMs(), wantStart)
				}
				if got, want := h.EndTimeMs()-h.StartTimeMs(), int64(1000); got != want {
					t.Errorf("interval %d length: got %dms, want %dms", i, got, want)
				}
				if strings.HasSuffix(h.Tag(), CorrectedTagSuffix) {
					corr.Merge(h)
				} else {
					raw.Merge(h)
				}
			}
			if strings.Join(tags, " ") != strings.Join(tt.wantTags, " ") {
				t.Errorf("tags: got %v, want %v", tags, tt.wantTags)
			}
			total := res.Totals[tt.phase]
			if !raw.Equals(total.Raw) {
				t.Errorf("raw intervals read back: count %d, want %d", raw.TotalCount(), total.Raw.TotalCount())
			}
			if total.HasCorrection && !corr.Equals(total.Corrected) {
				t.Errorf("corrected intervals read back: count %d, want %d", corr.TotalCount(), total.Corrected.TotalCount())
			}
		})
	}
	t.Run("header", func(t *testing.T) {
		var buf bytes.Buffer
		if err := res.WriteHlog(&buf, Hold); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(buf.String(), "\n")
		want := []string{
			"#[Histogram log format version 1.3]",
			"#[zkherd phase hold: values in microseconds, Interval_Max in seconds; tags hold (raw) and hold_corrected (coordinated-omission corrected)]",
			"#[for example: HistogramLogProcessor -i FILE -tag hold -outputValueUnitRatio 1000 (milliseconds)]",
			"#[StartTime: 1773500966 (seconds since epoch), 2026-03-14T15:09:26Z]",
			"#[BaseTime: 1773500966 (seconds since epoch)]",
			`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`,
		}
		for i, w := range want {
			if lines[i] != w {
				t.Errorf("line %d: got %q, want %q", i+1, lines[i], w)
			}
		}
		if !strings.HasPrefix(lines[len(want)], "Tag=hold,0.500000,1.000000,0.010") {
			t.Errorf("first interval line: got %q, want it to start %q", lines[len(want)], "Tag=hold,0.500000,1.000000,0.010")
		}
	})
}

func TestEncodeDecode(t *testing.T) {
	res := fixedResult(t)
	h := res.Totals[Acquire].Corrected
	s, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeHistogram(s)
	if err != nil {
		t.Fatalf("DecodeHistogram: %v", err)
	}
	if !got.Equals(h) {
		t.Errorf("decoded histogram differs: count %d, want %d", got.TotalCount(), h.TotalCount())
	}
	if len(s) > 2000 {
		t.Errorf("encoded length: got %d bytes, want a compact form", len(s))
	}
	for _, bad := range []string{"", "not base64!", "SElTVEZBQUFBQUFBQUFB"} {
		if _, err := DecodeHistogram(bad); !errors.Is(err, ErrDecode) {
			t.Errorf("DecodeHistogram(%q): got %v, want ErrDecode", bad, err)
		}
	}
}

func TestSummary(t *testing.T) {
	res := fixedResult(t)
	got := res.Summary(Hold)
	want := Summary{Count: 600, P50: 5.003, P90: 9.007, P99: 10.007, P999: 10.007, Max: 10.007, Mean: 5.502,
		CorrectedP50: 5.003, CorrectedP90: 9.007, CorrectedP99: 10.007, CorrectedP999: 10.007, CorrectedMax: 10.007,
		CorrectedMean: 5.502, CorrectedCount: 600}
	if got != want {
		t.Errorf("hold summary:\ngot  %+v\nwant %+v", got, want)
	}
	if got := res.Summary(Dequeue); got != (Summary{}) {
		t.Errorf("summary of a phase without values: got %+v, want zero", got)
	}
	if got := res.Phases; len(got) != 2 || got[0] != Acquire || got[1] != Hold {
		t.Errorf("phases: got %v, want [acquire hold]", got)
	}
}
