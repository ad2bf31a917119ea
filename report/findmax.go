package report

import (
	"fmt"
	"io"
)

// FindMax is a --find-max search: each rate tried, in the order tried,
// and the highest served within the target (0 for none).
type FindMax struct {
	Target   string   `json:"target"`
	Curve    []string `json:"curve"`
	BestPerS float64  `json:"best_per_s"`
}

func writeFindMax(w io.Writer, f *FindMax) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "\nfind-max, within %s (in the order tried):\n", f.Target)
	for _, l := range f.Curve {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if f.BestPerS > 0 {
		fmt.Fprintf(w, "highest rate within %s: %.0f operations/s\n", f.Target, f.BestPerS)
	} else {
		fmt.Fprintf(w, "no rate tried was within %s\n", f.Target)
	}
}
