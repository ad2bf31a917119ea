package inspect

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name      string
		data      []byte
		kind      DataKind
		lines     int // 0: don't check
		first     string
		truncated bool
	}{
		{name: "empty", data: nil, kind: DataEmpty},
		{name: "text", data: []byte("hello\nworld\n"), kind: DataText, lines: 2, first: "hello"},
		{name: "json object", data: []byte(`{"a":1,"b":[2]}`), kind: DataJSON, lines: 6, first: "{"},
		{name: "json-looking but invalid", data: []byte(`{not json}`), kind: DataText, lines: 1, first: "{not json}"},
		{name: "utf-8", data: []byte("zürich ✓"), kind: DataText, lines: 1, first: "zürich ✓"},
		{name: "binary", data: []byte{0, 1, 2, 0xff, 'a'}, kind: DataBinary, lines: 1, first: "00000000  00 01 02 ff 61"},
		{name: "control characters are binary", data: []byte("a\x00b"), kind: DataBinary, lines: 1},
		{name: "1 MB text is cut", data: []byte(strings.Repeat("x", 1<<20)), kind: DataText, truncated: true},
		{name: "large binary is cut", data: append([]byte{0}, make([]byte, 1<<20)...), kind: DataBinary, lines: DefaultHexLimit / 16, truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decode(tt.data, 0, 0)
			if d.Kind != tt.kind {
				t.Errorf("kind = %s, want %s", d.Kind, tt.kind)
			}
			if tt.lines > 0 && len(d.Lines) != tt.lines {
				t.Errorf("%d lines, want %d: %q", len(d.Lines), tt.lines, d.Lines)
			}
			if tt.first != "" && (len(d.Lines) == 0 || !strings.HasPrefix(d.Lines[0], tt.first)) {
				t.Errorf("first line = %q, want prefix %q", d.Lines, tt.first)
			}
			if d.Truncated() != tt.truncated || d.Total != len(tt.data) {
				t.Errorf("shown %d of %d (truncated %v), want total %d truncated %v", d.Shown, d.Total, d.Truncated(), len(tt.data), tt.truncated)
			}
		})
	}
}

func TestDecodeCutsOnRuneBoundary(t *testing.T) {
	d := Decode([]byte(strings.Repeat("é", 10)), 5, 0) // 2 bytes each
	if d.Shown != 4 || d.Lines[0] != "éé" {
		t.Errorf("shown %d bytes %q, want 4 bytes \"éé\"", d.Shown, d.Lines[0])
	}
}

func TestHexDumpWidths(t *testing.T) {
	data := []byte("0123456789abcdefXYZ")
	for _, tt := range []struct {
		perLine, lines, width int
	}{{16, 2, 78}, {8, 3, 45}, {4, 5, 29}} {
		got := HexDump(data, tt.perLine)
		if len(got) != tt.lines || len(got[0]) != tt.width {
			t.Errorf("HexDump(%d bytes per line) = %d lines of %d, want %d of %d: %q", tt.perLine, len(got), len(got[0]), tt.lines, tt.width, got)
		}
	}
}
