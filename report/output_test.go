package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/exit"
)

func TestWriteJSON(t *testing.T) {
	tests := []struct {
		name string
		run  func(*testing.T) *Run
	}{
		{"herd-vs-fair", herdVsFair},
		{"failed", failedRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, tt.run(t)); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, buf.Bytes())
		})
	}
}

func TestJSONFieldNames(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, herdVsFair(t)); err != nil {
		t.Fatal(err)
	}
	// The names issue 4 promises to scripts and CI.
	for _, name := range []string{
		"zkherd_version", "run_id", "partial", "server", "scenarios", "name", "recipe", "clients",
		"duration_s", "operations", "throughput_per_s", "errors", "total", "by_kind", "latency_ms",
		"count", "p50", "p90", "p99", "p999", "max", "corrected_p99", "herd", "wakeups_per_release",
		"zk_requests_per_acquisition", "server_packets_per_acquisition", "checks",
		"mutual_exclusion_violations", "fifo_bypasses", "lost_items", "duplicate_items",
		"leftover_znodes", "passed", "acquire", "handoff",
	} {
		if !bytes.Contains(buf.Bytes(), []byte(`"`+name+`":`)) {
			t.Errorf("report.json has no field %q", name)
		}
	}
}

func TestWriteSummary(t *testing.T) {
	tests := []struct {
		name string
		run  func(*testing.T) *Run
	}{
		{"herd-vs-fair", herdVsFair},
		{"failed", failedRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSummary(&buf, tt.run(t)); err != nil {
				t.Fatal(err)
			}
			checkWidth(t, buf.String())
			checkGolden(t, buf.Bytes())
		})
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name string
		a, b func(*testing.T) *Run
	}{
		{"same scenarios", herdVsFair, func(t *testing.T) *Run {
			r := herdVsFair(t)
			r.RunID = "81bc0d4e"
			r.Scenarios[1].ThroughputPerS *= 1.5
			r.Scenarios[1].Herd.Figures[figures.ServerPacketsPerAcquisition] = figures.Unknown
			return r
		}},
		{"one scenario each", func(t *testing.T) *Run {
			r := herdVsFair(t)
			r.Scenarios = r.Scenarios[:1]
			return r
		}, func(t *testing.T) *Run {
			r := herdVsFair(t)
			r.Scenarios = r.Scenarios[1:]
			return r
		}},
		{"unmatched", herdVsFair, failedRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Compare(&buf, tt.a(t), tt.b(t)); err != nil {
				t.Fatal(err)
			}
			checkWidth(t, buf.String())
			checkGolden(t, buf.Bytes())
		})
	}
}

func checkWidth(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > Width {
			t.Errorf("line %d is %d columns wide, want at most %d: %q", i+1, n, Width, line)
		}
	}
}

func TestReadJSON(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var good bytes.Buffer
	if err := WriteJSON(&good, herdVsFair(t)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		wantIs  error
		wantMsg string
	}{
		{"missing", filepath.Join(dir, "nope", "report.json"), fs.ErrNotExist,
			"report: cannot read " + filepath.Join(dir, "nope", "report.json") + ": no such file or directory"},
		{"directory", dir, nil, "is a directory"},
		{"empty", write("empty.json", "  \n"), ErrMalformed, "empty.json is empty"},
		{"syntax error", write("syntax.json", "{\n  \"run_id\": \"x\",\n  \"scenarios\": [}\n"), ErrMalformed,
			"syntax.json:3:17: invalid character '}'"},
		{"wrong type", write("type.json", `{"zkherd_version": "1", "scenarios": [{"clients": "many"}]}`), ErrMalformed,
			"type.json:1:56: field scenarios.clients holds a JSON string, want int"},
		{"not a report", write("other.json", `{"name": "package.json"}`), ErrMalformed,
			"other.json has neither zkherd_version nor scenarios"},
		{"null scenario", write("null.json", `{"zkherd_version": "1", "scenarios": [null]}`), ErrMalformed,
			"scenario 1 is null"},
		{"good", write("good.json", good.String()), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := ReadJSON(tt.path)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				var again bytes.Buffer
				if err := WriteJSON(&again, run); err != nil {
					t.Fatal(err)
				}
				if again.String() != good.String() {
					t.Errorf("JSON read back and written again differs from the original")
				}
				return
			}
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tt.wantMsg)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("got error %q, want it to contain %q", err, tt.wantMsg)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("got error %v, want it to match %v", err, tt.wantIs)
			}
		})
	}
}

func TestWriteDir(t *testing.T) {
	t.Run("files", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out", "run1")
		if err := WriteDir(dir, herdVsFair(t)); err != nil {
			t.Fatalf("WriteDir: %v", err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		var want []string
		for _, s := range []string{"herd-lock", "fair-lock"} {
			for _, p := range []string{"acquire", "create", "get_children", "watch_set", "handoff", "hold", "delete"} {
				want = append(want, s+"-"+p+".hgrm", s+"-"+p+".hlog")
			}
			want = append(want, s+"-acquire-service.hgrm")
		}
		want = append(want, "report.html", "report.json")
		slices.Sort(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("files:\ngot  %v\nwant %v", got, want)
		}
		hgrm, err := os.ReadFile(filepath.Join(dir, "fair-lock-acquire.hgrm"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(hgrm, []byte("       Value     Percentile TotalCount 1/(1-Percentile)")) {
			t.Errorf("hgrm starts %q, want the percentile table header", hgrm[:60])
		}
	})

	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
	}{
		{"under a file", filepath.Join(file, "out")},
		{"deep under a file", filepath.Join(file, "a", "b")},
		{"a file", file},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteDir(tt.dir, herdVsFair(t))
			if !errors.Is(err, ErrUnwritable) {
				t.Fatalf("got %v, want an error matching ErrUnwritable", err)
			}
			var de *DirError
			if !errors.As(err, &de) {
				t.Fatalf("got %T, want *DirError", err)
			}
			named := exit.Text(err, func(in string) string { return "--" + in })
			if !strings.HasPrefix(named, "report: cannot write to ") || !strings.HasSuffix(named, "; choose another --out") {
				t.Errorf("message %q, want \"report: cannot write to DIR: ...; choose another --out\"", named)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("the library's message %q names a flag", err)
			}
			if b, _ := os.ReadFile(file); string(b) != "x" {
				t.Errorf("the file in the way was changed")
			}
		})
	}
	t.Run("nothing left behind on failure", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "new", "out")
		run := herdVsFair(t)
		run.Scenarios[1].Metrics = nil
		// A NaN cannot be written as JSON: the first file fails.
		run.Scenarios[0].ThroughputPerS = nan()
		if err := WriteDir(dir, run); err == nil {
			t.Fatal("got no error, want one")
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("left behind: %v", entries)
		}
	})
}

func TestWriteHTML(t *testing.T) {
	tests := []struct {
		name     string
		run      func(*testing.T) *Run
		wantSVGs int
		want     []string
	}{
		// side by side: 4 bar charts and a spectrum; per scenario:
		// spectrum, latency, throughput, sessions.
		{"herd-vs-fair", herdVsFair, 5 + 2*4, []string{"PASS", "Side by side", "herd-lock", "fair-lock",
			"fair-lock vs herd-lock: throughput", "paused member 2 (leader)", "Server packets per acquisition"}},
		{"failed", failedRun, 4, []string{"FAIL", "Partial run", "mutual exclusion: 3",
			"client 17 granted the lock while client 4 held it", "leftover znodes: 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			run := tt.run(t)
			if err := WriteHTML(&buf, run); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			checkWellFormed(t, page)
			// Besides: a histogram per phase of every scenario, and the
			// main phase's side by side.
			want := tt.wantSVGs
			for _, s := range run.Scenarios {
				want += len(s.Histogram)
				if len(s.Histogram) == 0 {
					t.Errorf("scenario %s has no histogram", s.Name)
				}
			}
			if len(run.Scenarios) > 1 {
				want += len(run.Scenarios)
			}
			if got := strings.Count(page, "<svg "); got != want {
				t.Errorf("svg plots: got %d, want %d", got, want)
			}
			for _, svg := range regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1) {
				checkWellFormed(t, svg)
				if !strings.Contains(svg, "<title>") || !strings.Contains(svg, "<polyline") && !strings.Contains(svg, "<rect x=") {
					t.Errorf("svg without a title or data: %.200s", svg)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("page does not contain %q", w)
				}
			}
			// Self-contained: nothing fetched, no script.
			for _, bad := range []string{"<script", "<link", "src=", "@import", "url(http"} {
				if strings.Contains(page, bad) {
					t.Errorf("page contains %q", bad)
				}
			}
			for _, ref := range regexp.MustCompile(`https?://[^"' ]+`).FindAllString(page, -1) {
				if ref != "http://www.w3.org/2000/svg" {
					t.Errorf("page refers to %s", ref)
				}
			}
			if os.Getenv("ZKHERD_REPORT_HTML") != "" {
				os.WriteFile(filepath.Join(os.Getenv("ZKHERD_REPORT_HTML"), tt.name+".html"), buf.Bytes(), 0o644)
			}
		})
	}
}

// checkWellFormed parses s as XML: the page is written so that it is both
// HTML and well-formed XML, which catches unclosed or misnested elements.
func checkWellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			line := 0
			if se, ok := err.(*xml.SyntaxError); ok {
				line = se.Line
			}
			lines := strings.Split(s, "\n")
			ctx := ""
			if line > 0 && line <= len(lines) {
				ctx = lines[line-1]
			}
			t.Fatalf("not well-formed: %v\nline: %.300s", err, ctx)
		}
	}
}
