package inert

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain /app/lock-0000000001", "plain /app/lock-0000000001"},
		{"héllo wörld ✓ 日本", "héllo wörld ✓ 日本"},
		{`json {"a":"b\"c"}`, `json {"a":"b\"c"}`},
		{"secret\x1b[8mworld:anyone cdrwa", `secret\x1b[8mworld:anyone cdrwa`},
		{"bell\a back\b cr\r nl\n tab\t del\x7f", `bell\x07 back\x08 cr\x0d nl\x0a tab\x09 del\x7f`},
		{"c1 csi \u009b31m", `c1 csi \u009b31m`},
		{"bad utf8 \xff\xfe", `bad utf8 \xff\xfe`},
		{"rtl \u202egnp.exe", `rtl \u202egnp.exe`},
		{"zero\u200bwidth bom\ufeff ls\u2028", `zero\u200bwidth bom\ufeff ls\u2028`},
		{"tag \U000e0041", `tag \U000e0041`},
		{"osc \x1b]8;;http://evil\x07link", `osc \x1b]8;;http://evil\x07link`},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUnescapeNames(t *testing.T) {
	for _, name := range []string{"/app/\u202eevil", "/a\u200bb/\ufeffc", "/plain", `/back\slash`, `/literal\u0041`, "/tag\U000e0041"} {
		if got := Unescape(String(name)); got != name {
			t.Errorf("Unescape(String(%q)) = %q", name, got)
		}
	}
}

// FuzzString: whatever a server sends, String's result holds no byte or
// rune a terminal acts on, is valid UTF-8, is a fixed point, and keeps a
// name that ZooKeeper allows (no control characters) recoverable.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[8m", "\x1b[2J\x1b[H", "\x9b8m", "\u009b8m", "\xc2\x9b", "\x1b]0;title\x07",
		"\x1bP+q\x1b\\", "\u202e\u2066\u200f", "\xff", "\xed\xa0\x80", "a\rb", "\x00", `\u202e`, "\U000e0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if !utf8.ValidString(got) {
			t.Fatalf("String(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if dangerous(r) {
				t.Fatalf("String(%q) = %q holds %U", s, got, r)
			}
		}
		if again := String(got); again != got {
			t.Fatalf("String not a fixed point: %q then %q", got, again)
		}
		if !Safe(got) || Safe(s) != (got == s) {
			t.Fatalf("Safe disagrees with String for %q", s)
		}
		nameLike := utf8.ValidString(s) && !strings.ContainsRune(s, '\\') && !strings.ContainsFunc(s, func(r rune) bool { return r < 0xa0 && dangerous(r) })
		if nameLike && Unescape(got) != s {
			t.Fatalf("Unescape(String(%q)) = %q", s, Unescape(got))
		}
	})
}

func TestAll(t *testing.T) {
	type inner struct {
		Name  string
		Names []string
		Data  []byte
	}
	type outer struct {
		A     string
		In    inner
		Ptr   *inner
		List  []inner
		M     map[string]string
		Err   any
		Arr   [1]string
		quiet string
	}
	bad := "x\x1b[8my"
	v := outer{A: bad, In: inner{Name: bad, Names: []string{"ok", bad}, Data: []byte(bad)}, Ptr: &inner{Name: bad},
		List: []inner{{Name: bad}}, M: map[string]string{bad: bad, "k": "v"}, Err: bad, Arr: [1]string{bad}, quiet: bad}
	All(&v)
	want := String(bad)
	for name, got := range map[string]string{"A": v.A, "In.Name": v.In.Name, "In.Names[1]": v.In.Names[1], "Ptr.Name": v.Ptr.Name,
		"List[0].Name": v.List[0].Name, "M[key]": v.M[want], "Arr[0]": v.Arr[0]} {
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if string(v.In.Data) != bad || v.quiet != bad || v.M["k"] != "v" || len(v.M) != 2 {
		t.Errorf("changed what it must not: data %q, unexported %q, map %v", v.In.Data, v.quiet, v.M)
	}
}
