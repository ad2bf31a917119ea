package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zkherd/zkherd/internal/format"

	"github.com/zkherd/zkherd/figures"
)

// Herd is a scenario's raw counts and figures (the figures package's
// lists), report.json's "herd" object: each figure under its key, each
// count under its name, and mntr_error. The object keeps the name it had
// when it held the herd measures only, and its keys, so that old reports
// still read and compare.
type Herd struct {
	// Totals are the window's raw counts (a server count is absent when
	// the servers could not be read).
	Totals figures.Totals
	// Figures are the figures' values by key, as the run computed them
	// (figures.Unknown when not known); a report read back keeps the
	// values it was written with.
	Figures map[string]float64
	// MntrError says why the server counts are missing, if they are.
	MntrError string
}

// newHerd computes every figure of totals.
func newHerd(t figures.Totals, mntrErr string) Herd {
	return Herd{Totals: t.Clone(), Figures: figures.Values(t), MntrError: mntrErr}
}

// Figure returns the value of the figure called key, figures.Unknown when
// the report has none.
func (h Herd) Figure(key string) float64 {
	if v, ok := h.Figures[key]; ok {
		return v
	}
	return figures.Unknown
}

// MarshalJSON writes the figures, then the counts, in their lists' order.
func (h Herd) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%q:%s", k, val)
		return nil
	}
	for _, f := range figures.All() {
		if v, ok := h.Figures[f.Key]; ok {
			if err := field(f.Key, v); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range figures.Counts() {
		if v, ok := h.Totals[c.Count]; ok {
			if err := field(string(c.Count), v); err != nil {
				return nil, err
			}
		}
	}
	if h.MntrError != "" {
		if err := field("mntr_error", h.MntrError); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes, and reports written before
// the figures had a list (the same keys); keys it does not know, from a
// newer zkherd, are left out.
func (h *Herd) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*h = Herd{Totals: figures.Totals{}, Figures: map[string]float64{}}
	for _, f := range figures.All() {
		if v, ok := raw[f.Key]; ok {
			var x float64
			if err := json.Unmarshal(v, &x); err != nil {
				return fmt.Errorf("herd.%s: %w", f.Key, err)
			}
			h.Figures[f.Key] = x
		}
	}
	for _, c := range figures.Counts() {
		if v, ok := raw[string(c.Count)]; ok {
			var x int64
			if err := json.Unmarshal(v, &x); err != nil {
				return fmt.Errorf("herd.%s: %w", c.Count, err)
			}
			h.Totals[c.Count] = x
		}
	}
	if v, ok := raw["mntr_error"]; ok {
		if err := json.Unmarshal(v, &h.MntrError); err != nil {
			return fmt.Errorf("herd.mntr_error: %w", err)
		}
	}
	return nil
}

// fmtFigure writes a figure's value in its format, n/a when unknown.
func fmtFigure(f figures.Figure, v float64) string {
	if v < 0 {
		return "n/a"
	}
	switch f.Format {
	case figures.ThreeDecimals:
		return fmtNum(v, 3)
	}
	return fmtNum(v, 1)
}

// countsLine is the raw counts behind the figures, as "wakeups /
// zk requests" and "1,234 / 5,678" (operations are shown on their own).
func countsLine(t figures.Totals) (names, values string) {
	var ns, vs []string
	for _, c := range figures.Counts() {
		v, ok := t[c.Count]
		if !ok || c.Count == figures.Operations {
			continue
		}
		ns = append(ns, strings.ReplaceAll(string(c.Count), "_", " "))
		vs = append(vs, format.Count(v))
	}
	return strings.Join(ns, " / "), strings.Join(vs, " / ")
}
