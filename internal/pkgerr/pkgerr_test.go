package pkgerr

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestWrapAndReason(t *testing.T) {
	errBad := errors.New("invalid run")
	inner := fmt.Errorf("%w: barrier size 3 must divide the 10 clients", errBad)
	err := Wrap("loadgen", inner)
	if got, want := err.Error(), "loadgen: invalid run: barrier size 3 must divide the 10 clients"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, errBad) {
		t.Errorf("errors.Is(wrapped, sentinel) = false, want true")
	}
	if got := Wrap("distrib", err); got != err {
		t.Errorf("Wrap of a marked error = %q, want it unchanged", got)
	}
	if got, want := Reason(err).Error(), "invalid run: barrier size 3 must divide the 10 clients"; got != want {
		t.Errorf("Reason() = %q, want %q", got, want)
	}
	if Wrap("x", nil) != nil {
		t.Errorf("Wrap(nil) != nil")
	}
	if got := Reason(context.Canceled); got != context.Canceled {
		t.Errorf("Reason of an unmarked error = %v, want it unchanged", got)
	}
}
