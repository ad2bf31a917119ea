package usermsg

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// FlagValue is the one line for a flag given a value it cannot take, in
// place of the parser's text (`strconv.ParseInt: parsing "abc": invalid
// syntax`, `time: missing unit in duration "30"`): the flag, the value,
// what is wrong and what to write instead; ok is false for other errors.
func FlagValue(err error) (line string, ok bool) {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return "", false
	}
	f := ive.GetFlag()
	name := "--" + f.Name
	return fmt.Sprintf("%s %s: %s", name, strconv.Quote(ive.GetValue()), valueFix(name, f.Value.Type(), f.DefValue, ive.Unwrap())), true
}

// valueFix says what is wrong with a value of a flag of type typ (pflag's
// type names) and what to write; def is the flag's default, an example
// when it is one.
func valueFix(name, typ, def string, cause error) string {
	example := func(fallback string) string {
		if def == "" || def == "0" || def == "0s" || def == "[]" {
			return name + " " + fallback
		}
		return name + " " + def
	}
	var ne *strconv.NumError
	rangeErr := errors.As(cause, &ne) && errors.Is(ne.Err, strconv.ErrRange)
	switch {
	case typ == "duration" && strings.Contains(cause.Error(), "missing unit"):
		return "a duration needs a unit: write it such as " + name + " 30s (units: ms, s, m, h)"
	case typ == "duration":
		return "not a duration: write it such as " + name + " 30s (units: ms, s, m, h)"
	case rangeErr:
		return "out of range; give a smaller number, such as " + example("100")
	case strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint"):
		return "not a whole number; give one such as " + example("100")
	case strings.HasPrefix(typ, "float"):
		return "not a number; give one such as " + example("100")
	case typ == "bool":
		return "give true or false, or the flag alone"
	}
	return Clean(cause.Error())
}
