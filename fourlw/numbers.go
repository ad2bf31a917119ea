package fourlw

import (
	"errors"
	"strconv"
)

// Errors for a number in a reply that is not one: the field and its value
// are named by the caller. strconv's own text ("strconv.ParseInt: parsing
// "x": invalid syntax") is Go's, not words for the person reading it.
var (
	errNotNumber  = errors.New("is not a number")
	errOutOfRange = errors.New("is out of range")
)

// plainNumber is err, from parsing a number of a reply, in plain words;
// an error that is not strconv's is returned as it is.
func plainNumber(err error) error {
	var ne *strconv.NumError
	switch {
	case !errors.As(err, &ne):
		return err
	case errors.Is(ne.Err, strconv.ErrRange):
		return errOutOfRange
	}
	return errNotNumber
}
