// Package pkgerr marks a library's errors with the library's name at its
// exported functions: a log or a test reads "loadgen: invalid run: ...",
// while the command line shows the user the same error without the
// package's name (Reason), by unwrapping the mark rather than editing
// text. A package using it writes its sentinels and inner errors without
// its name ("invalid run"), and wraps what its exported functions return
// with Wrap.
package pkgerr

// Error is an error of package Pkg.
type Error struct {
	Pkg string
	Err error
}

func (e *Error) Error() string { return e.Pkg + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Wrap marks err as pkg's. nil stays nil; an error already marked (by
// any package) is returned as it is.
func Wrap(pkg string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Pkg: pkg, Err: err}
}

// Reason is err without the marks at its top: what a user reads.
func Reason(err error) error {
	for {
		e, ok := err.(*Error)
		if !ok {
			return err
		}
		err = e.Err
	}
}
