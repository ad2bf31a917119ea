package inspect

import (
	"errors"
	"testing"
	"unicode"

	"github.com/go-zookeeper/zk"
)

// FuzzErrorText: the text of an error the inspector returns is safe to
// print whatever path or server text it holds, and the error still
// matches what it wraps.
func FuzzErrorText(f *testing.F) {
	for _, s := range []string{"/app", "/a\u202eb", "\x1b[8m", "\x9b2J", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, cause := range []error{zk.ErrNoNode, zk.ErrNoAuth, errors.New(s)} {
			err := wrapErr("read", s, cause)
			for _, r := range err.Error() {
				if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
					t.Fatalf("error text %q holds %U", err.Error(), r)
				}
			}
			if cause == zk.ErrNoAuth && !errors.Is(err, ErrNoAccess) || cause == zk.ErrNoNode && !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("%v no longer matches its cause", err)
			}
		}
	})
}

// TestDecodeInert: text data with a C1 control (NEL) or a Unicode
// line separator passes isText (both are spaces to Go) and is shown
// escaped; a tab keeps its picture.
func TestDecodeInert(t *testing.T) {
	d := Decode([]byte("a\u0085b\tc\u2028d"), 0, 0)
	if d.Kind != DataText || len(d.Lines) != 1 || d.Lines[0] != `a\u0085b␉c\u2028d` {
		t.Errorf("Decode = %s %q", d.Kind, d.Lines)
	}
}
