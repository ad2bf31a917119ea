package inspect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zkherd/zkherd/internal/inert"
)

// Limits on how much node data is decoded for display.
const (
	// DefaultTextLimit is how many bytes of text or JSON are shown.
	DefaultTextLimit = 64 << 10
	// DefaultHexLimit is how many bytes of binary data are shown as hex.
	DefaultHexLimit = 4 << 10
)

// DataKind says how node data was decoded.
type DataKind string

// Data kinds.
const (
	DataEmpty  DataKind = "empty"
	DataText   DataKind = "text"
	DataJSON   DataKind = "json"
	DataBinary DataKind = "binary"
)

// Decoded is node data ready to show: pretty JSON, UTF-8 text, or a hex
// dump for anything else, cut to a limit.
type Decoded struct {
	Kind  DataKind
	Lines []string
	Shown int // bytes of the data the lines cover
	Total int // bytes of data
}

// Truncated reports whether only part of the data is shown.
func (d Decoded) Truncated() bool { return d.Shown < d.Total }

// Decode turns data into display lines: JSON (objects and arrays) is
// pretty-printed, valid UTF-8 text without control characters other than
// whitespace is shown as is, everything else as a hex dump with an ASCII
// column. Text is cut at textLimit bytes (on a rune boundary), hex at
// hexLimit; zero limits mean the defaults.
func Decode(data []byte, textLimit, hexLimit int) Decoded {
	if textLimit <= 0 {
		textLimit = DefaultTextLimit
	}
	if hexLimit <= 0 {
		hexLimit = DefaultHexLimit
	}
	d := Decoded{Total: len(data)}
	switch {
	case len(data) == 0:
		d.Kind = DataEmpty
		return d
	case isText(data):
		if len(data) <= textLimit && looksJSON(data) {
			var buf bytes.Buffer
			if json.Indent(&buf, data, "", "  ") == nil {
				d.Kind, d.Shown = DataJSON, len(data)
				d.Lines = shownLines(strings.Split(buf.String(), "\n"))
				return d
			}
		}
		d.Kind = DataText
		shown := data
		if len(shown) > textLimit {
			cut := textLimit
			for cut > 0 && !utf8.RuneStart(shown[cut]) {
				cut--
			}
			shown = shown[:cut]
		}
		d.Shown = len(shown)
		d.Lines = shownLines(strings.Split(strings.TrimSuffix(string(shown), "\n"), "\n"))
		return d
	}
	d.Kind = DataBinary
	shown := data[:min(len(data), hexLimit)]
	d.Shown = len(shown)
	d.Lines = HexDump(shown, 16)
	return d
}

// shownLines makes text lines inert for a terminal: C0 control characters
// (a tab, a carriage return) as their Unicode pictures (␉, ␍), anything
// else a terminal acts on (a C1 NEL, a bidirectional override) escaped by
// package inert.
func shownLines(lines []string) []string {
	for i, l := range lines {
		if inert.Safe(l) {
			continue
		}
		l = strings.Map(func(r rune) rune {
			switch {
			case r < 0x20:
				return 0x2400 + r
			case r == 0x7f:
				return '␡'
			}
			return r
		}, l)
		lines[i] = inert.String(l)
	}
	return lines
}

// isText: valid UTF-8, printable or whitespace.
func isText(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	for _, r := range string(data) {
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

func looksJSON(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

// HexDumpCompact formats 16 bytes a line as xxd does, in 67 columns:
// offset, eight groups of two bytes, ASCII.
func HexDumpCompact(data []byte) []string {
	lines := make([]string, 0, (len(data)+15)/16)
	for off := 0; off < len(data); off += 16 {
		row := data[off:min(off+16, len(data))]
		var hex, ascii strings.Builder
		for i := 0; i < 16; i++ {
			if i > 0 && i%2 == 0 {
				hex.WriteByte(' ')
			}
			if i < len(row) {
				fmt.Fprintf(&hex, "%02x", row[i])
				ascii.WriteByte(printable(row[i]))
			} else {
				hex.WriteString("  ")
			}
		}
		lines = append(lines, fmt.Sprintf("%08x: %s  %s", off, hex.String(), ascii.String()))
	}
	return lines
}

func printable(c byte) byte {
	if c < 0x20 || c > 0x7e {
		return '.'
	}
	return c
}

// HexDump formats perLine bytes per line (16 fits 80 columns, 8 fits 48):
// offset, hex, ASCII.
func HexDump(data []byte, perLine int) []string {
	perLine = max(perLine, 1)
	lines := make([]string, 0, (len(data)+perLine-1)/perLine)
	for off := 0; off < len(data); off += perLine {
		row := data[off:min(off+perLine, len(data))]
		var hex, ascii strings.Builder
		for i := 0; i < perLine; i++ {
			if i == 8 {
				hex.WriteByte(' ')
			}
			if i < len(row) {
				fmt.Fprintf(&hex, "%02x ", row[i])
				c := row[i]
				if c < 0x20 || c > 0x7e {
					c = '.'
				}
				ascii.WriteByte(c)
			} else {
				hex.WriteString("   ")
			}
		}
		lines = append(lines, fmt.Sprintf("%08x  %s |%s|", off, hex.String(), ascii.String()))
	}
	return lines
}
