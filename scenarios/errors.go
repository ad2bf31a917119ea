package scenarios

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// The sentinels carry no package name: the errors this package
	// returns are marked with it (pkgerr), except scenario mistakes
	// (*Error, ErrorList), which read file:line: field: what.

	// ErrInvalid is matched (with errors.Is) by every error that reports a
	// mistake in a scenario: an *Error or an ErrorList.
	ErrInvalid = errors.New("invalid scenario")
	// ErrUnknown is matched by the error Lookup returns for a name that is
	// neither a built-in scenario nor a file.
	ErrUnknown = errors.New("unknown scenario")
)

// Pos is a place in a scenario file. Line and Col are 1-based; 0 means
// unknown.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	switch {
	case p.File == "" && p.Line == 0:
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is one mistake in a scenario. Its message reads
//
//	scn.yaml:7:10: arrival.kind: "burst" is not one of stampede, constant, poisson, closed
type Error struct {
	Pos   Pos    // where; zero for a Spec built in Go
	Field string // dotted path such as "arrival.kind" or "faults[1].member"; empty for the whole file
	Msg   string // what is wrong and what is allowed
}

func (e *Error) Error() string {
	var b strings.Builder
	if p := e.Pos.String(); p != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is reports that every Error is an ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// ErrorList is every mistake found in one scenario, in file order. It is
// never empty when returned as an error.
type ErrorList []*Error

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap gives errors.Is and errors.As access to each Error.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Is reports that an ErrorList is an ErrInvalid, even an empty one.
func (l ErrorList) Is(target error) bool { return target == ErrInvalid }

// err returns l as an error, or nil when it is empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
