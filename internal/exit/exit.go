// Package exit is zkherd's exit statuses and the error that carries one:
// the command line and the load application layer (package loadrun)
// classify failures with it, and main turns it into the process's status.
package exit

import (
	"context"
	"errors"
	"fmt"
)

// Exit statuses: 0 success, 1 a run whose correctness checks failed, 2 a
// user error (bad flag, unreachable server, missing install), 130
// interrupted.
const (
	OK          = 0
	CheckFailed = 1
	Usage       = 2
	Interrupted = 130
)

// Error carries an exit status with a message meant for the user: one
// line naming the problem and the fix, never a stack trace.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef is a user error (status Usage) with a formatted message; %w wraps
// as fmt.Errorf does.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// AsUsage marks err as a user error, keeping its text and chain.
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: Usage, Err: err}
}

// Code is the process status for err, what a command returned: OK for
// nil, its own status for an *Error, Interrupted for a cancellation after
// a signal (interrupted), Usage for anything else.
func Code(err error, interrupted bool) int {
	var ee *Error
	switch {
	case err == nil:
		return OK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled) && interrupted:
		return Interrupted
	}
	return Usage
}
