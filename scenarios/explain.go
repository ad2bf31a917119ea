package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/zkherd/zkherd/internal/exit"
)

// Listed is one built-in scenario as `zkherd scenarios list` shows it;
// its JSON form is what `scenarios list -o json` prints.
type Listed struct {
	Name string `json:"name"`
	// Recipe is the recipe, or "a vs b" for a scenario comparing several.
	Recipe  string `json:"recipe"`
	Clients int    `json:"clients"`
	// Length is the run's duration ("2m0s") or operation count ("500 ops").
	Length  string `json:"length"`
	Arrival string `json:"arrival"`
	// Summary is the first sentence of the description, shortened for
	// the table; Description is the whole of it.
	Summary     string `json:"summary"`
	Description string `json:"description"`
}

// List describes every built-in scenario, in the order WriteList prints.
func List() []Listed {
	var out []Listed
	for _, s := range Builtins() {
		e := s.Effective()
		recipe := string(e.Recipe)
		if len(e.Compare) > 0 {
			var names []string
			for _, st := range e.Compare {
				names = append(names, string(st.Recipe))
			}
			recipe = strings.Join(names, " vs ")
		}
		length := e.Duration.String()
		if e.Ops > 0 {
			length = fmt.Sprintf("%d ops", e.Ops)
		}
		out = append(out, Listed{Name: e.Name, Recipe: recipe, Clients: e.Clients, Length: length,
			Arrival: string(e.Arrival.Kind), Summary: firstSentence(e.Description), Description: strings.TrimSpace(e.Description)})
	}
	return out
}

// WriteList writes the table `zkherd scenarios list` prints: every
// built-in scenario with its recipe, size, length, arrival model and the
// first sentence of its description. name names the input a scenario is
// given by ("scenario") as the command does (nil: bare; exit.Advice).
func WriteList(w io.Writer, name func(input string) string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRECIPE\tCLIENTS\tLENGTH\tARRIVAL\tSUMMARY")
	for _, l := range List() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", l.Name, l.Recipe, l.Clients, l.Length, l.Arrival, l.Summary)
	}
	tw.Flush()
	fmt.Fprintln(w, "\n"+exit.Advice(name, "zkherd scenarios show NAME explains one and prints its YAML; zkherd load {scenario} NAME|FILE runs it."))
}

// Explain writes spec, read from src and named name on the command line,
// as a scenario file that `zkherd load` accepts as it is: what the
// defaults make of it, in comments, then src. The description is in the
// YAML itself. A src that already starts with such a header (the output
// of an earlier Explain) keeps only the new one, so that
// `scenarios show my.yaml` of a saved `scenarios show` prints it once.
// input names the input a scenario is given by as WriteList's name does.
func Explain(w io.Writer, name string, spec Spec, src []byte, input func(string) string) {
	e := spec.Effective()
	comment := func(s string) {
		for _, line := range strings.Split(s, "\n") {
			fmt.Fprintln(w, strings.TrimRight("# "+line, " "))
		}
	}
	comment(headerFirst(e.Name))
	for _, run := range spec.Runs() {
		comment(strings.ReplaceAll(wrap(fmt.Sprintf("%s: %s, %d clients, %s, %s arrivals, hold %v, ramp-up %.0f sessions/s.",
			run.Name, run.Recipe, run.Clients, lengthOf(run), run.Arrival.Kind, run.Hold, run.RampUp), 72), "\n", "\n    "))
	}
	comment("")
	comment(fmt.Sprintf("zkherd scenarios show %s > my.yaml, edit it, then", name))
	comment(exit.Advice(input, "zkherd load {scenario} my.yaml. Every field is described in"))
	comment(DocURL)
	fmt.Fprintln(w)
	w.Write(withoutHeader(src))
}

// headerFirst is the first line of Explain's header.
func headerFirst(name string) string { return "Scenario " + name + ", every default applied:" }

// withoutHeader returns src without a leading header Explain wrote: the
// comment lines from "# Scenario NAME, every default applied:" to the one
// naming DocURL, and the blank line after them.
func withoutHeader(src []byte) []byte {
	n := 0 // bytes of the header so far
	for i, l := range bytes.SplitAfter(src, []byte("\n")) {
		n += len(l)
		line := strings.TrimRight(string(l), "\r\n")
		switch {
		case i == 0 && line != "# "+headerFirst(strings.TrimSuffix(strings.TrimPrefix(line, "# Scenario "), ", every default applied:")):
			return src
		case !strings.HasPrefix(line, "#"):
			return src
		case line == "# "+DocURL:
			rest := src[n:]
			if r, ok := bytes.CutPrefix(rest, []byte("\n")); ok {
				rest = r
			}
			return rest
		}
	}
	return src
}

func lengthOf(r Run) string {
	if r.Ops > 0 {
		return fmt.Sprintf("%d operations", r.Ops)
	}
	return r.Duration.String()
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return s
}

func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(s) {
		if n > 0 && n+1+len(word) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
