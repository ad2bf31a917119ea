package exit

import (
	"errors"
	"testing"
)

// TestInputNamed: an input error reads its values bare, and as the
// command names them once Named; its status and chain are kept, and a
// user's value that looks like a name is left as it is.
func TestInputNamed(t *testing.T) {
	errBase := errors.New("base")
	err := Inputf("{sweep} %s: %w; drop {clients}", "{clients}", errBase)
	if got, want := err.Error(), "sweep {clients}: base; drop clients"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	named := Named(err, func(n string) string { return "--" + n })
	if got, want := named.Error(), "--sweep {clients}: base; drop --clients"; got != want {
		t.Errorf("Named = %q, want %q", got, want)
	}
	if Code(named, false) != Usage || !errors.Is(named, errBase) {
		t.Errorf("Named lost the status (%d) or the chain", Code(named, false))
	}
	plain := errors.New("plain")
	if Named(plain, func(string) string { return "x" }) != plain {
		t.Error("Named changed an error that names no input")
	}
}
