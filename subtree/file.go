package subtree

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// ReadFile reads the export in the file name, or on stdin for "-": the
// one reader of the format, so that `zkherd import` and tests refuse
// what is not an export alike. Errors matching ErrBadDocument name the
// file and what is wrong.
func ReadFile(name string, stdin io.Reader) (*Document, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var doc Document
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrBadDocument, err)
	}
	if doc.Format != Format {
		return nil, fmt.Errorf("%s: %w (format %q, want %q)", name, ErrBadDocument, doc.Format, Format)
	}
	return &doc, nil
}

// WriteJSON writes doc as the indented JSON ReadFile reads.
func (doc *Document) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
