// Package inert makes text from a server safe to print on a terminal.
//
// Anyone allowed to create a znode chooses its data, its ACL ids (the
// digest provider accepts any "x:y") and, through their client, what the
// four-letter words report. Printed raw, ESC[8m (conceal) hides the rest
// of a line, colours and cursor moves fake other parts of the screen, and
// bidirectional overrides reorder it. String turns every such character
// into visible text; nothing else changes, so ordinary text and the
// escapes it already holds print as they are.
package inert

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every byte or rune a terminal could act on
// written as a visible escape: control characters (C0, DEL, C1) and
// invalid UTF-8 bytes as \xNN (C1 as \u0080..\u009f), format characters
// (bidirectional overrides, zero-width characters, the BOM) and line or
// paragraph separators as \uNNNN (\UNNNNNNNN above U+FFFF).
// String(String(s)) == String(s).
func String(s string) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r < 0x80 && dangerous(r):
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case dangerous(r) && r > 0xffff:
			b.WriteString(`\U`)
			b.WriteString(hex4(r >> 16))
			b.WriteString(hex4(r & 0xffff))
		case dangerous(r):
			b.WriteString(`\u`)
			b.WriteString(hex4(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Unescape reverses String's \uNNNN escapes of format characters, the only
// ones a znode's name can hold (ZooKeeper refuses control characters and
// invalid UTF-8 in paths), so that a name shown escaped can be typed or
// passed back as it is shown. Other text is returned unchanged.
func Unescape(s string) string {
	if !strings.Contains(s, `\u`) && !strings.Contains(s, `\U`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		n := 0
		switch {
		case strings.HasPrefix(s[i:], `\u`):
			n = 4
		case strings.HasPrefix(s[i:], `\U`):
			n = 8
		}
		if n > 0 && i+2+n <= len(s) {
			if v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32); err == nil && dangerous(rune(v)) && rune(v) >= 0xa0 {
				b.WriteRune(rune(v))
				i += 2 + n
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// Safe reports whether s prints as it is (String(s) == s).
func Safe(s string) bool { return safe(s) }

func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return safeSlow(s[i:])
		}
	}
	return true
}

func safeSlow(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || dangerous(r) {
			return false
		}
		i += size
	}
	return true
}

// dangerous: control (Cc: C0, DEL, C1), format (Cf: bidi controls,
// zero-width characters, BOM...), line and paragraph separators.
func dangerous(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029
}

const digits = "0123456789abcdef"

func hex2(c byte) string { return string([]byte{digits[c>>4], digits[c&15]}) }

func hex4(r rune) string {
	return string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}
