package scenarios

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// Load reads and parses the scenario file at path. A scenario without a
// name is named after the file (without its extension).
func Load(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, pkgerr.Wrap("scenarios", err)
	}
	return Parse(path, data)
}

// Parse parses a scenario from YAML and validates it. file names the
// source in error messages. The error, if any, is an ErrorList holding
// every mistake found, each with its line and column.
func Parse(file string, data []byte) (Spec, error) {
	d := &decoder{src: &source{file: file, pos: map[string]Pos{}}}
	s := d.document(data)
	if s.Name == "" && !d.hasName {
		base := filepath.Base(file)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	s.src = d.src
	if d.parsed {
		for _, e := range s.validate(d.src) {
			if !d.reported(e.Field) {
				d.errs = append(d.errs, e)
			}
		}
	}
	sortErrors(d.errs)
	return s, d.errs.err()
}

// source remembers where each field of a parsed Spec was.
type source struct {
	file string
	pos  map[string]Pos // by field path, such as "arrival.kind" or "faults[1].member"
}

// at returns the position of field path, or of its nearest enclosing field,
// or of the file.
func (s *source) at(path string) Pos {
	if s == nil {
		return Pos{}
	}
	for p := path; p != ""; p = parentPath(p) {
		if pos, ok := s.pos[p]; ok {
			return pos
		}
	}
	return Pos{File: s.file}
}

// parentPath strips the last element of a field path: "faults[1].member"
// becomes "faults[1]", which becomes "faults".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func sortErrors(errs ErrorList) {
	slices.SortStableFunc(errs, func(a, b *Error) int {
		la, lb := a.Pos.Line, b.Pos.Line
		switch {
		case la == 0 && lb == 0:
			return 0
		case la == 0:
			return 1
		case lb == 0:
			return -1
		case la != lb:
			return la - lb
		}
		return a.Pos.Col - b.Pos.Col
	})
}

// Field names, as written in YAML.
var (
	topFields = []string{"name", "description", "recipe", "clients", "locks", "duration", "ops",
		"arrival", "ramp_up", "hold", "session_timeout", "server_max_session_timeout", "ensemble", "seed",
		"rwlock", "semaphore", "queue", "barrier", "faults", "compare", "ignore_lost", "thresholds"}
	arrivalFields   = []string{"kind", "rate", "think_time", "stages"}
	holdFields      = []string{"kind", "value", "min", "max", "mean"}
	rwlockFields    = []string{"read_ratio"}
	semaphoreFields = []string{"leases"}
	queueFields     = []string{"producers", "consumers", "items"}
	barrierFields   = []string{"size"}
	stepFields      = []string{"name", "description", "recipe", "rwlock", "semaphore", "queue", "barrier", "thresholds"}
	faultFields     = []string{"at", "every", "kind", "member", "duration", "rate", "delay", "on"}
)

// decoder walks a yaml.Node tree into a Spec, collecting every mistake.
type decoder struct {
	src     *source
	errs    ErrorList
	hasName bool            // the document has a name field, even an empty one
	parsed  bool            // the document was a mapping: semantic checks are worth running
	bad     map[string]bool // fields whose value was unusable
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.src.file, Line: n.Line, Col: n.Column} }

// reported reports whether the value of field, or of a field enclosing it,
// was unusable, so that Validate does not report it again as missing.
func (d *decoder) reported(field string) bool {
	for p := field; p != ""; p = parentPath(p) {
		if d.bad[p] {
			return true
		}
	}
	return false
}

// errorf reports that the value of field, at n, is unusable.
func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	if d.bad == nil {
		d.bad = map[string]bool{}
	}
	d.bad[field] = true
	d.notef(n, field, format, args...)
}

// notef reports a mistake that leaves the value of field usable.
func (d *decoder) notef(n *yaml.Node, field, format string, args ...any) {
	e := &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Pos = d.pos(n)
	} else {
		e.Pos = Pos{File: d.src.file}
	}
	d.errs = append(d.errs, e)
}

// yamlError reads a syntax error of the YAML module, which has no type
// for them, only text: "yaml: [line N: ]message".
var yamlError = regexp.MustCompile(`(?s)^yaml: (?:line (\d+): )?(.*)$`)

func (d *decoder) document(data []byte) Spec {
	var s Spec
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(nil, "", "empty file; a scenario needs at least a name and a recipe")
			return s
		}
		d.syntaxError(err)
		return s
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.notef(&extra, "", "a second YAML document; a scenario file holds one (remove the \"---\")")
	} else if !errors.Is(err, io.EOF) {
		d.syntaxError(err)
	}
	root := resolve(&doc)
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = resolve(root.Content[0])
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "a scenario is a mapping of fields (name: ..., recipe: ...), not a %s", kindName(root))
		return s
	}
	d.parsed = true
	d.mapping(root, "", topFields, func(key string, v *yaml.Node) {
		switch key {
		case "name":
			d.hasName = true
			s.Name = d.str(v, key)
		case "description":
			s.Description = strings.TrimSpace(d.str(v, key))
		case "recipe":
			s.Recipe = Recipe(d.str(v, key))
		case "clients":
			s.Clients = d.int(v, key, 1)
		case "locks":
			s.Locks = d.int(v, key, 1)
		case "duration":
			s.Duration = d.positiveDuration(v, key)
		case "ops":
			s.Ops = uint64(d.int(v, key, 1))
		case "arrival":
			s.Arrival = d.arrival(v, key)
		case "ramp_up":
			s.RampUp = d.float(v, key, true)
		case "hold":
			s.Hold = d.distribution(v, key)
		case "session_timeout":
			s.SessionTimeout = d.positiveDuration(v, key)
		case "server_max_session_timeout":
			s.ServerMaxSessionTimeout = d.positiveDuration(v, key)
		case "ensemble":
			s.Ensemble = d.int(v, key, 1)
		case "seed":
			s.Seed = uint64(d.int(v, key, 1))
		case "rwlock", "semaphore", "queue", "barrier":
			d.param(&s.Params, key, v, key)
		case "faults":
			s.Faults = d.faults(v, key)
		case "compare":
			s.Compare = d.steps(v, key)
		case "ignore_lost":
			s.IgnoreLost = d.bool(v, key)
		case "thresholds":
			s.Thresholds = d.thresholds(v, key)
		}
	})
	return s
}

func (d *decoder) syntaxError(err error) {
	e := &Error{Pos: Pos{File: d.src.file}, Msg: "bad YAML: " + err.Error()}
	if m := yamlError.FindStringSubmatch(err.Error()); m != nil {
		e.Pos.Line, _ = strconv.Atoi(m[1]) // 0 when the error names no line
		e.Msg = "bad YAML: " + m[2]
	}
	d.errs = append(d.errs, e)
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty value"
		}
		return fmt.Sprintf("value (%q)", n.Value)
	}
	return "document"
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// mapping calls fn for each key of mapping n in order, after recording the
// value's position. Unknown and repeated keys are reported, not passed on.
func (d *decoder) mapping(n *yaml.Node, path string, known []string, fn func(key string, v *yaml.Node)) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		key := k.Value
		field := join(path, key)
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "a field name must be a plain word, not a %s", kindName(k))
			continue
		}
		if !slices.Contains(known, key) {
			d.notef(k, field, "unknown field%s", suggestField(key, known))
			continue
		}
		if first, ok := seen[key]; ok {
			d.notef(k, field, "given twice (first on line %d)", first.Line)
			continue
		}
		seen[key] = k
		d.src.pos[field] = d.pos(v)
		fn(key, v)
	}
}

// suggestField says what could have been meant by an unknown field name.
func suggestField(got string, known []string) string {
	if s := suggest(got, known); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return "; allowed here: " + strings.Join(known, ", ")
}

func (d *decoder) scalar(v *yaml.Node, field string) bool {
	switch {
	case v.Kind != yaml.ScalarNode:
		d.errorf(v, field, "want a single value, not a %s", kindName(v))
		return false
	case v.Tag == "!!null":
		d.errorf(v, field, "missing value")
		return false
	}
	return true
}

func (d *decoder) str(v *yaml.Node, field string) string {
	if !d.scalar(v, field) {
		return ""
	}
	return v.Value
}

// bool decodes true or false.
func (d *decoder) bool(v *yaml.Node, field string) bool {
	if !d.scalar(v, field) {
		return false
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		d.errorf(v, field, "%q is not true or false", v.Value)
		return false
	}
	return b
}

// int decodes a whole number of at least min; below min it reports the
// mistake and returns 0.
func (d *decoder) int(v *yaml.Node, field string, min int) int {
	if !d.scalar(v, field) {
		return 0
	}
	var n int
	if err := v.Decode(&n); err != nil {
		d.errorf(v, field, "%q is not a whole number", v.Value)
		return 0
	}
	if n < min {
		d.errorf(v, field, "must be at least %d, got %d", min, n)
		return 0
	}
	return n
}

// float decodes a number; positive requires it above 0.
func (d *decoder) float(v *yaml.Node, field string, positive bool) float64 {
	if !d.scalar(v, field) {
		return 0
	}
	var f float64
	if err := v.Decode(&f); err != nil {
		d.errorf(v, field, "%q is not a number", v.Value)
		return 0
	}
	if positive && f <= 0 {
		d.errorf(v, field, "must be above 0, got %v", v.Value)
		return 0
	}
	return f
}

const durationSyntax = "use Go duration syntax like 3s, 500ms or 1m30s"

func (d *decoder) duration(v *yaml.Node, field string) (time.Duration, bool) {
	if !d.scalar(v, field) {
		return 0, false
	}
	if v.Tag == "!!int" && v.Value == "0" {
		return 0, true // Go's duration syntax allows a bare 0
	}
	if v.Tag == "!!int" || v.Tag == "!!float" {
		d.errorf(v, field, "%s has no unit; %s", v.Value, durationSyntax)
		return 0, false
	}
	t, err := time.ParseDuration(strings.TrimSpace(v.Value))
	if err != nil {
		d.errorf(v, field, "%q is not a duration; %s", v.Value, durationSyntax)
		return 0, false
	}
	return t, true
}

// positiveDuration decodes a duration that must be above 0 (0 would read as
// "the default").
func (d *decoder) positiveDuration(v *yaml.Node, field string) time.Duration {
	t, ok := d.duration(v, field)
	if ok && t <= 0 {
		d.errorf(v, field, "must be above 0, got %s", v.Value)
		return 0
	}
	return t
}

// nonNegativeDuration decodes a duration where 0 is meaningful.
func (d *decoder) nonNegativeDuration(v *yaml.Node, field string) time.Duration {
	t, ok := d.duration(v, field)
	if ok && t < 0 {
		d.errorf(v, field, "must not be negative, got %s", v.Value)
		return 0
	}
	return t
}

func (d *decoder) arrival(v *yaml.Node, path string) Arrival {
	var a Arrival
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		// arrival: stampede
		d.src.pos[path+".kind"] = d.pos(v)
		a.Kind = ArrivalKind(v.Value)
		return a
	}
	if v.Kind != yaml.MappingNode {
		d.errorf(v, path, "want a kind (arrival: closed) or a mapping (arrival: {kind: constant, rate: 100}), not a %s", kindName(v))
		return a
	}
	hasKind := false
	d.mapping(v, path, arrivalFields, func(key string, v *yaml.Node) {
		field := join(path, key)
		switch key {
		case "kind":
			hasKind = true
			a.Kind = ArrivalKind(d.str(v, field))
		case "rate":
			a.Rate = d.float(v, field, true)
		case "think_time":
			a.ThinkTime = d.nonNegativeDuration(v, field)
		case "stages":
			if d.scalar(v, field) {
				st, err := ParseStages(v.Value)
				if err != nil {
					d.errorf(v, field, "%v", strings.TrimPrefix(err.Error(), ErrStages.Error()+": "))
				}
				a.Stages = st
			}
		}
	})
	if !hasKind {
		d.errorf(v, path+".kind", "missing; one of %s", list(ArrivalKinds()))
	}
	return a
}

func (d *decoder) distribution(v *yaml.Node, path string) Distribution {
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		// hold: 5ms
		d.src.pos[path+".value"] = d.pos(v)
		t := d.nonNegativeDuration(v, path)
		return FixedHold(t)
	}
	if v.Kind != yaml.MappingNode {
		d.errorf(v, path, "want a duration (hold: 5ms) or a mapping (hold: {kind: uniform, min: 1ms, max: 5ms}), not a %s", kindName(v))
		return Distribution{}
	}
	dist := Distribution{Kind: Fixed}
	d.mapping(v, path, holdFields, func(key string, v *yaml.Node) {
		field := join(path, key)
		switch key {
		case "kind":
			dist.Kind = DistKind(d.str(v, field))
		case "value":
			dist.Value = d.nonNegativeDuration(v, field)
		case "min":
			dist.Min = d.nonNegativeDuration(v, field)
		case "max":
			dist.Max = d.positiveDuration(v, field)
		case "mean":
			dist.Mean = d.positiveDuration(v, field)
		}
	})
	return dist
}

// param decodes one recipe parameter block (rwlock, semaphore, ...).
func (d *decoder) param(p *Params, key string, v *yaml.Node, path string) {
	if v.Kind != yaml.MappingNode {
		d.errorf(v, path, "want a mapping of %s parameters, not a %s", key, kindName(v))
		return
	}
	switch key {
	case "rwlock":
		q := &RWLockParams{ReadRatio: DefaultReadRatio}
		d.mapping(v, path, rwlockFields, func(_ string, v *yaml.Node) {
			q.ReadRatio = d.float(v, path+".read_ratio", false)
		})
		p.RWLock = q
	case "semaphore":
		q := &SemaphoreParams{}
		d.mapping(v, path, semaphoreFields, func(_ string, v *yaml.Node) {
			q.Leases = d.int(v, path+".leases", 1)
		})
		p.Semaphore = q
	case "queue":
		q := &QueueParams{}
		d.mapping(v, path, queueFields, func(key string, v *yaml.Node) {
			field := join(path, key)
			switch key {
			case "producers":
				q.Producers = d.int(v, field, 1)
			case "consumers":
				q.Consumers = d.int(v, field, 1)
			case "items":
				q.Items = uint64(d.int(v, field, 1))
			}
		})
		p.Queue = q
	case "barrier":
		q := &BarrierParams{}
		d.mapping(v, path, barrierFields, func(_ string, v *yaml.Node) {
			q.Size = d.int(v, path+".size", 1)
		})
		p.Barrier = q
	}
}

func (d *decoder) sequence(v *yaml.Node, path, what string) []*yaml.Node {
	if v.Kind != yaml.SequenceNode {
		d.errorf(v, path, "want a list of %s, not a %s", what, kindName(v))
		return nil
	}
	items := make([]*yaml.Node, len(v.Content))
	for i, n := range v.Content {
		items[i] = resolve(n)
		d.src.pos[fmt.Sprintf("%s[%d]", path, i)] = d.pos(items[i])
	}
	return items
}

func (d *decoder) faults(v *yaml.Node, path string) []Fault {
	var faults []Fault
	for i, n := range d.sequence(v, path, "faults") {
		fp := fmt.Sprintf("%s[%d]", path, i)
		var f Fault
		if n.Kind != yaml.MappingNode {
			d.errorf(n, fp, "want a mapping such as {at: 5s, kind: kill-leader}, not a %s", kindName(n))
			faults = append(faults, f)
			continue
		}
		var at, every *yaml.Node
		hasKind := false
		d.mapping(n, fp, faultFields, func(key string, v *yaml.Node) {
			field := join(fp, key)
			switch key {
			case "at":
				at = v
				f.At = d.nonNegativeDuration(v, field)
			case "every":
				every = v
				f.Every = d.positiveDuration(v, field)
			case "kind":
				hasKind = true
				f.Kind = FaultKind(d.str(v, field))
			case "member":
				f.Member = d.int(v, field, 1)
			case "duration":
				f.Duration = d.positiveDuration(v, field)
			case "rate":
				f.Rate = d.float(v, field, true)
			case "delay":
				f.Delay = d.positiveDuration(v, field)
			case "on":
				f.On = d.str(v, field)
			}
		})
		switch {
		case at == nil && every == nil:
			d.notef(n, fp, "say when: at (once, such as at: 5s) or every (repeated, such as every: 2s)")
		case at != nil && every != nil:
			d.notef(every, fp+".every", "set either at (once) or every (repeated), not both")
			f.Every = 0
		}
		if !hasKind {
			d.errorf(n, fp+".kind", "missing; one of %s", list(FaultKinds()))
		}
		faults = append(faults, f)
	}
	return faults
}

// thresholds decodes a list of threshold expressions such as
// "acquire.p99<500ms".
func (d *decoder) thresholds(v *yaml.Node, path string) []Threshold {
	var ts []Threshold
	for i, n := range d.sequence(v, path, "thresholds") {
		field := fmt.Sprintf("%s[%d]", path, i)
		expr := d.str(n, field)
		if expr == "" {
			continue
		}
		t, err := ParseThreshold(expr)
		if err != nil {
			msg := err.Error()
			if te := (*ThresholdError)(nil); errors.As(err, &te) {
				msg = te.Detail()
			}
			d.errorf(n, field, "%s", msg)
			continue
		}
		ts = append(ts, t)
	}
	return ts
}

func (d *decoder) steps(v *yaml.Node, path string) []Step {
	var steps []Step
	for i, n := range d.sequence(v, path, "steps") {
		sp := fmt.Sprintf("%s[%d]", path, i)
		var st Step
		switch {
		case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
			// - herd-lock
			d.src.pos[sp+".recipe"] = d.pos(n)
			st.Recipe = Recipe(n.Value)
		case n.Kind == yaml.MappingNode:
			hasRecipe := false
			d.mapping(n, sp, stepFields, func(key string, v *yaml.Node) {
				field := join(sp, key)
				switch key {
				case "name":
					st.Name = d.str(v, field)
				case "description":
					st.Description = strings.TrimSpace(d.str(v, field))
				case "recipe":
					hasRecipe = true
					st.Recipe = Recipe(d.str(v, field))
				case "thresholds":
					st.Thresholds = d.thresholds(v, field)
				default:
					d.param(&st.Params, key, v, field)
				}
			})
			if !hasRecipe {
				d.errorf(n, sp+".recipe", "missing; one of %s", list(Recipes()))
			}
		default:
			d.errorf(n, sp, "want a recipe (- herd-lock) or a mapping ({name: herd, recipe: herd-lock}), not a %s", kindName(n))
		}
		steps = append(steps, st)
	}
	return steps
}

// list joins names for messages: "a, b, c".
func list[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}
