package exit

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Input marks the names of the values a user gave in an Inputf message:
// the library says which value is bad ("clients"), the command says how
// the user gave it (a flag: "--clients"). Libraries never name flags.
const inputMark = "\x1f"

// inputName is a {name} in an Inputf format.
var inputName = regexp.MustCompile(`\{([a-z][a-z0-9-]*)\}`)

// InputError is bad input, its message naming the values at fault (see
// Inputf). Error gives the names bare; Named as the command calls them.
type InputError struct{ err error }

// Inputf is a user error (status Usage) about the values a user gave,
// each written {name} in format ("{clients} %d: must be at least 1"); %w
// wraps as fmt.Errorf does. Error() reads "clients 0: must be at least
// 1"; Text with a namer reads, for a command line, "--clients 0: ...".
func Inputf(format string, args ...any) error {
	return &Error{Code: Usage, Err: Input(format, args...)}
}

// Input is Inputf's InputError without the status, for an error type of
// a library that carries its own (see report.DirError).
func Input(format string, args ...any) *InputError {
	marked := inputName.ReplaceAllString(format, inputMark+"$1"+inputMark)
	return &InputError{err: fmt.Errorf(marked, args...)}
}

func (e *InputError) Error() string { return e.Named(func(n string) string { return n }) }
func (e *InputError) Unwrap() error { return errors.Unwrap(e.err) }

// Named is the message with each input named by name.
func (e *InputError) Named(name func(input string) string) string {
	parts := strings.Split(e.err.Error(), inputMark)
	for i := 1; i < len(parts); i += 2 {
		parts[i] = name(parts[i])
	}
	return strings.Join(parts, "")
}

// Text is err's message with the inputs of an InputError in its chain
// named by name, the rest as it is.
func Text(err error, name func(input string) string) string {
	text := err.Error()
	var ie *InputError
	if errors.As(err, &ie) {
		text = strings.Replace(text, ie.Error(), ie.Named(name), 1)
	}
	return text
}

// Named is err with the inputs it names (Inputf) named by name, its
// chain and status kept: a command returns it, and every caller reads the
// names as the user gave the values.
func Named(err error, name func(input string) string) error {
	var ie *InputError
	if err == nil || !errors.As(err, &ie) {
		return err
	}
	return &named{err: err, text: Text(err, name)}
}

type named struct {
	err  error
	text string
}

func (n *named) Error() string { return n.text }
func (n *named) Unwrap() error { return n.err }

// Advice is a line for the user (a notice, a reason printed or written
// into a report) naming the inputs written {name} in format as Inputf's
// errors do, each named by name: a library takes name from the command
// (package main: its flags) and never names a flag itself. A nil name
// names them bare.
func Advice(name func(input string) string, format string, args ...any) string {
	ie := Input(format, args...)
	if name == nil {
		return ie.Error()
	}
	return ie.Named(name)
}
