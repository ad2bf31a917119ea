// Package output is the -o of zkherd's status-like commands (cluster up,
// status and the member commands, version, scenarios list, report show and
// compare, import): text for a person or JSON for a
// script, chosen and written one way, so that no command writes its own
// "if json" branch.
package output

import (
	"encoding/json"
	"io"

	"github.com/zkherd/zkherd/internal/exit"
)

// Format is text or json.
type Format string

// The formats.
const (
	Text Format = "text"
	JSON Format = "json"
)

// Check refuses anything but text and json.
func (f Format) Check() error {
	if f != Text && f != JSON {
		return exit.Inputf("{output} %q: choose text or json", string(f))
	}
	return nil
}

// Write writes v to w: as indented JSON, or with text for a person.
func (f Format) Write(w io.Writer, v any, text func(io.Writer) error) error {
	if f == JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return text(w)
}
