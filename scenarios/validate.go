package scenarios

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Validate reports every mistake in s as an ErrorList, or nil. For a Spec
// that came from YAML, each mistake carries its file position. Faults
// naming a member are checked against s's own Ensemble size; see
// ValidateEnsemble for an ensemble of another size.
func (s Spec) Validate() error {
	errs := s.validate(s.src)
	sortErrors(errs)
	return errs.err()
}

// ValidateEnsemble reports faults that cannot happen on an ensemble of
// members servers (the one the run really targets): a member that does not
// exist, and, when local is false (servers not started by zkherd), faults
// that kill or pause server processes.
func (s Spec) ValidateEnsemble(members int, local bool) error {
	v := &validator{src: s.src}
	if !local && s.ServerMaxSessionTimeout != 0 {
		v.errorf("server_max_session_timeout", "configures the local ensemble zkherd starts; servers you name keep their own settings (leave it out, or name no servers so that zkherd starts the ensemble)")
	}
	for i, f := range s.Faults {
		path := fmt.Sprintf("faults[%d]", i)
		if !local && f.Kind.NeedsLocalEnsemble() {
			v.errorf(path+".kind", "%s acts on server processes, which only a local ensemble started by zkherd allows (the run targets existing servers)", f.Kind)
			continue
		}
		if f.Member > members {
			v.errorf(path+".member", "%d does not exist in a %d-node ensemble (members are %s)", f.Member, members, memberRange(members))
		}
	}
	sortErrors(v.errs)
	return v.errs.err()
}

func memberRange(n int) string {
	if n == 1 {
		return "only 1"
	}
	return fmt.Sprintf("1..%d", n)
}

// thresholdNames reports thresholds limited to a run the scenario does
// not have.
func (v *validator) thresholdNames(s Spec) {
	var names []string
	for _, r := range s.Runs() {
		names = append(names, r.Name)
	}
	for i, t := range s.Thresholds {
		if t.Scenario != "" && !slices.Contains(names, t.Scenario) {
			v.errorf(fmt.Sprintf("thresholds[%d]", i), "%q names no run of this scenario; its runs are %s", t.Scenario, strings.Join(names, ", "))
		}
	}
}

// validator collects mistakes with the positions of their fields.
type validator struct {
	src  *source
	errs ErrorList
}

func (v *validator) errorf(field, format string, args ...any) {
	v.errs = append(v.errs, &Error{Pos: v.src.at(field), Field: field, Msg: fmt.Sprintf(format, args...)})
}

// oneOf reports got as not one of the allowed values, with a suggestion.
func oneOf[T ~string](v *validator, field string, got T, allowed []T) {
	if got == "" {
		v.errorf(field, "missing; one of %s", list(allowed))
		return
	}
	msg := fmt.Sprintf("%q is not one of %s", got, list(allowed))
	if s := suggest(string(got), allowed); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	v.errorf(field, "%s", msg)
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

const maxNameLen = 64

func (v *validator) name(field, name string) {
	switch {
	case name == "":
		v.errorf(field, "missing; a scenario needs a name such as my-lock-test")
	case len(name) > maxNameLen || !namePattern.MatchString(name):
		v.errorf(field, "%q is not a usable name; use up to %d letters, digits, '.', '_' and '-', starting with a letter or digit", name, maxNameLen)
	}
}

// validate checks s; src gives positions (nil for a Spec built in Go).
func (s Spec) validate(src *source) ErrorList {
	v := &validator{src: src}
	e := s.Effective()

	v.name("name", s.Name)
	v.thresholdNames(s)
	if len(s.Compare) == 0 {
		if !s.Recipe.Valid() {
			oneOf(v, "recipe", s.Recipe, Recipes())
		}
	} else if s.Recipe != "" {
		v.errorf("recipe", "not used by a compare scenario: each compare step names its own recipe")
	}

	switch {
	case s.Clients < 0:
		v.errorf("clients", "must be at least 1, got %d", s.Clients)
	case s.Clients > MaxClients:
		v.errorf("clients", "must be at most %d, got %d", MaxClients, s.Clients)
	}
	switch {
	case s.Locks < 0:
		v.errorf("locks", "must be at least 1, got %d", s.Locks)
	case s.Clients >= 0 && e.Locks > e.Clients:
		v.errorf("locks", "%d lock paths for %d clients would leave some unused; use at most %d", e.Locks, e.Clients, e.Clients)
	}

	if s.Duration < 0 {
		v.errorf("duration", "must be above 0, got %v", s.Duration)
	}
	if s.Duration > 0 && s.Ops > 0 {
		v.errorf("ops", "set either duration (a time bound) or ops (an operation count), not both")
	}

	s.validateArrival(v)
	if s.RampUp < 0 {
		v.errorf("ramp_up", "must be above 0 sessions per second, got %v", s.RampUp)
	}
	validateDistribution(v, "hold", s.Hold)
	if s.SessionTimeout != 0 && (s.SessionTimeout < MinSessionTimeout || s.SessionTimeout > MaxSessionTimeout) {
		v.errorf("session_timeout", "%v is outside %v..%v, the session timeouts a local ensemble grants", s.SessionTimeout, MinSessionTimeout, MaxSessionTimeout)
	}
	if m := s.ServerMaxSessionTimeout; m != 0 && (m < MinSessionTimeout || m > MaxSessionTimeout) {
		v.errorf("server_max_session_timeout", "%v is outside %v..%v: a local ensemble's servers grant no less than %v", m, MinSessionTimeout, MaxSessionTimeout, MinSessionTimeout)
	}
	if s.Ensemble != 0 && s.Ensemble != 1 && s.Ensemble != 3 {
		v.errorf("ensemble", "%d members is not supported; a local ensemble has 1 or 3", s.Ensemble)
	}

	if len(s.Compare) == 0 {
		validateParams(v, "", s.Recipe, s.Params, s, e)
	} else {
		s.validateCompare(v, e)
	}
	s.validateFaults(v, e)
	if s.IgnoreLost {
		for _, r := range s.recipes() {
			if !r.Spec().Fenced {
				v.errorf("ignore_lost", "only lock recipes and election have a Lost signal to ignore, not %s", r)
				break
			}
		}
	}
	return v.errs
}

func (s Spec) validateArrival(v *validator) {
	a := s.Arrival
	if a.Kind != "" && !slices.Contains(ArrivalKinds(), a.Kind) {
		oneOf(v, "arrival.kind", a.Kind, ArrivalKinds())
		return
	}
	kind := a.Kind
	if kind == "" {
		kind = DefaultArrival
	}
	switch {
	case len(a.Stages) > 0 && kind != Constant:
		v.errorf("arrival.stages", "a schedule of rates paces constant arrivals only (kind: constant), not %s", kind)
	case len(a.Stages) > 0 && a.Rate != 0:
		v.errorf("arrival.stages", "give a rate or stages, not both")
	case len(a.Stages) > 0 && s.Duration > 0 && s.Duration != StagesDuration(a.Stages):
		v.errorf("arrival.stages", "the stages last %v, the duration says %v: leave out the duration (the stages set it)", StagesDuration(a.Stages), s.Duration)
	case len(a.Stages) > 0:
	case kind.Open() && a.Rate <= 0:
		v.errorf("arrival.rate", "%s arrivals need a rate above 0 (operations per second over all clients), such as rate: 100", kind)
	case !kind.Open() && a.Rate != 0:
		v.errorf("arrival.rate", "not used by %s arrivals (only constant and poisson have a rate); use think_time to slow clients down", kind)
	}
	switch {
	case a.ThinkTime < 0:
		v.errorf("arrival.think_time", "must not be negative, got %v", a.ThinkTime)
	case kind.Open() && a.ThinkTime != 0:
		v.errorf("arrival.think_time", "not used by %s arrivals (only stampede and closed have a think time)", kind)
	}
}

func validateDistribution(v *validator, path string, d Distribution) {
	if d.Kind == "" {
		if d != (Distribution{}) {
			v.errorf(path+".kind", "missing; one of %s", list(DistKinds()))
		}
		return
	}
	unused := func(field string, set bool) {
		if set {
			v.errorf(path+"."+field, "not used by a %s distribution", d.Kind)
		}
	}
	negative := func(field string, t time.Duration) {
		if t < 0 {
			v.errorf(path+"."+field, "must not be negative, got %v", t)
		}
	}
	switch d.Kind {
	case Fixed:
		negative("value", d.Value)
		unused("min", d.Min != 0)
		unused("max", d.Max != 0)
		unused("mean", d.Mean != 0)
	case Uniform:
		unused("value", d.Value != 0)
		unused("mean", d.Mean != 0)
		negative("min", d.Min)
		switch {
		case d.Max <= 0:
			v.errorf(path+".max", "a uniform distribution needs max above 0, such as {kind: uniform, min: 1ms, max: 5ms}")
		case d.Max < d.Min:
			v.errorf(path+".max", "%v is below min (%v)", d.Max, d.Min)
		}
	case Exponential:
		unused("value", d.Value != 0)
		unused("min", d.Min != 0)
		switch {
		case d.Mean <= 0:
			v.errorf(path+".mean", "an exponential distribution needs a mean above 0, such as {kind: exponential, mean: 2ms}")
		case d.Max != 0 && d.Max < d.Mean:
			v.errorf(path+".max", "%v caps the distribution below its mean (%v)", d.Max, d.Mean)
		}
	default:
		oneOf(v, path+".kind", d.Kind, DistKinds())
	}
}

// validateParams checks the parameter blocks for recipe r at prefix (""
// or "compare[i]"): only r's block may be set, and its values must fit.
func validateParams(v *validator, prefix string, r Recipe, p Params, s, e Spec) {
	at := func(field string) string { return join(prefix, field) }
	blocks := []struct {
		name   string
		recipe Recipe
		set    bool
	}{
		{"rwlock", RWLock, p.RWLock != nil},
		{"semaphore", Semaphore, p.Semaphore != nil},
		{"queue", Queue, p.Queue != nil},
		{"barrier", Barrier, p.Barrier != nil},
	}
	for _, b := range blocks {
		if b.set && r != b.recipe && r.Valid() {
			v.errorf(at(b.name), "only used by recipe %s, not %s", b.recipe, r)
		}
	}
	clients := e.Clients
	eff := p.effective(r, clients)
	switch r {
	case RWLock:
		if q := eff.RWLock; q.ReadRatio < 0 || q.ReadRatio > 1 {
			v.errorf(at("rwlock.read_ratio"), "%v is not a fraction between 0 and 1, such as 0.9 for 90%% readers", q.ReadRatio)
		}
	case Semaphore:
		switch q := eff.Semaphore; {
		case q.Leases < 0:
			v.errorf(at("semaphore.leases"), "must be at least 1, got %d", q.Leases)
		case q.Leases > clients:
			v.errorf(at("semaphore.leases"), "%d leases for %d clients; use at most %d", q.Leases, clients, clients)
		}
	case Queue:
		q := eff.Queue
		var raw QueueParams
		if p.Queue != nil {
			raw = *p.Queue
		}
		switch {
		case raw.Producers < 0:
			v.errorf(at("queue.producers"), "must be at least 1, got %d", raw.Producers)
		case raw.Consumers < 0:
			v.errorf(at("queue.consumers"), "must be at least 1, got %d", raw.Consumers)
		case q.Producers < 1 || q.Consumers < 1:
			v.errorf(at("queue"), "needs at least one producer and one consumer, but %d clients make %d producers and %d consumers", clients, q.Producers, q.Consumers)
		case q.Producers+q.Consumers != clients:
			v.errorf(at("queue"), "%d producers and %d consumers are %d clients, but clients is %d; leave clients out or make them add up",
				q.Producers, q.Consumers, q.Producers+q.Consumers, clients)
		}
		if q.Items > 0 {
			switch {
			case s.Ops > 0:
				v.errorf(at("queue.items"), "set either ops or queue.items (the queue's operation count), not both")
			case s.Duration > 0:
				v.errorf(at("queue.items"), "set either duration (a time bound) or queue.items (an item count), not both")
			}
		}
	case Barrier:
		switch q := eff.Barrier; {
		case q.Size < 0:
			v.errorf(at("barrier.size"), "must be at least 1, got %d", q.Size)
		case q.Size > clients:
			v.errorf(at("barrier.size"), "%d is more than the %d clients; no barrier would ever open", q.Size, clients)
		case q.Size > 0 && clients%q.Size != 0:
			v.errorf(at("barrier.size"), "%d does not divide the %d clients; the %d left over would wait forever (use a divisor such as %s)",
				q.Size, clients, clients%q.Size, divisors(clients))
		}
	}
}

// divisors lists up to three divisors of n above 1, for suggestions.
func divisors(n int) string {
	var ds []string
	for d := 2; d <= n && len(ds) < 3; d++ {
		if n%d == 0 {
			ds = append(ds, fmt.Sprint(d))
		}
	}
	if len(ds) == 0 {
		return fmt.Sprint(n)
	}
	return strings.Join(ds, ", ")
}

func (s Spec) validateCompare(v *validator, e Spec) {
	if len(s.Compare) < 2 {
		v.errorf("compare", "has %d step; a comparison needs at least 2", len(s.Compare))
	}
	names := map[string]int{}
	for i, st := range s.Compare {
		p := fmt.Sprintf("compare[%d]", i)
		if !st.Recipe.Valid() {
			oneOf(v, p+".recipe", st.Recipe, Recipes())
		}
		name := st.Name
		if name == "" {
			name = string(st.Recipe)
		} else {
			v.name(p+".name", name)
		}
		if j, dup := names[name]; dup && name != "" {
			v.errorf(p+".name", "%q is also the name of compare[%d]; steps need distinct names", name, j)
		}
		names[name] = i
		validateParams(v, p, st.Recipe, st.Params, s, e)
	}
}

// recipes returns the scenario's recipe, or every step's.
func (s Spec) recipes() []Recipe {
	recipes := []Recipe{s.Recipe}
	if len(s.Compare) > 0 {
		recipes = recipes[:0]
		for _, st := range s.Compare {
			recipes = append(recipes, st.Recipe)
		}
	}
	return recipes
}

func (s Spec) validateFaults(v *validator, e Spec) {
	// Recipes that the faults apply to: the scenario's, or every step's.
	recipes := s.recipes()
	for i, f := range s.Faults {
		p := fmt.Sprintf("faults[%d]", i)
		at := func(field string) string { return p + "." + field }
		if !f.Kind.Valid() {
			oneOf(v, at("kind"), f.Kind, FaultKinds())
		}
		switch {
		case f.At < 0:
			v.errorf(at("at"), "must not be negative, got %v", f.At)
		case f.Every < 0:
			v.errorf(at("every"), "must be above 0, got %v", f.Every)
		case f.At > 0 && f.Every > 0:
			v.errorf(at("every"), "set either at (once) or every (repeated), not both")
		case e.Duration > 0 && f.At >= e.Duration:
			v.errorf(at("at"), "%v is not before the end of the run (duration %v)", f.At, e.Duration)
		case e.Duration > 0 && f.Every >= e.Duration:
			v.errorf(at("every"), "%v is not shorter than the run (duration %v), so the fault would never happen", f.Every, e.Duration)
		}
		if !f.Kind.Valid() {
			continue
		}
		spec := f.Kind.spec()
		users := func(uses func(FaultKindSpec) bool) string {
			var ks []FaultKind
			for _, k := range faultKinds {
				if uses(k) {
					ks = append(ks, k.Kind)
				}
			}
			return list(ks)
		}
		ef := f.Effective()
		switch {
		case f.Member != 0 && !spec.Member:
			v.errorf(at("member"), "not used by %s (only by %s)", f.Kind, users(func(s FaultKindSpec) bool { return s.Member }))
		case f.Member < 0:
			v.errorf(at("member"), "must be at least 1, got %d", f.Member)
		case f.Member > e.Ensemble:
			hint := ""
			if e.Ensemble < 3 {
				hint = "; set ensemble: 3 for a local 3-node ensemble"
			}
			v.errorf(at("member"), "%d does not exist in a %d-node ensemble (members are %s)%s", f.Member, e.Ensemble, memberRange(e.Ensemble), hint)
		}
		switch {
		case f.Duration != 0 && !spec.Duration:
			v.errorf(at("duration"), "not used by %s (only by %s)", f.Kind, users(func(s FaultKindSpec) bool { return s.Duration }))
		case f.Duration < 0:
			v.errorf(at("duration"), "must be above 0, got %v", f.Duration)
		case f.Every > 0 && ef.Duration >= f.Every:
			v.errorf(at("duration"), "%v is not shorter than every (%v); each occurrence would overlap the next", ef.Duration, f.Every)
		}
		switch {
		case f.Rate != 0 && !spec.Rate:
			v.errorf(at("rate"), "not used by %s (only by %s)", f.Kind, users(func(s FaultKindSpec) bool { return s.Rate }))
		case f.Rate < 0:
			v.errorf(at("rate"), "must be above 0, got %v", f.Rate)
		case !spec.RatePerSecond && f.Rate > 1:
			v.errorf(at("rate"), "%v is not a fraction of connections between 0 and 1, such as 0.5 for half of them", f.Rate)
		}
		switch {
		case f.On != "" && !spec.On:
			v.errorf(at("on"), "not used by %s (only by %s)", f.Kind, users(func(s FaultKindSpec) bool { return s.On }))
		case f.On != "" && !slices.Contains(FaultOns(), f.On):
			v.errorf(at("on"), "%q is not a request to cut on; use one of %s", f.On, strings.Join(FaultOns(), ", "))
		case f.On != "" && f.Rate != 0:
			v.errorf(at("rate"), "not used with on (each occurrence cuts one connection, at its next %s)", f.On)
		}
		switch {
		case f.Delay != 0 && !spec.Delay:
			v.errorf(at("delay"), "not used by %s (only by %s)", f.Kind, users(func(s FaultKindSpec) bool { return s.Delay }))
		case f.Delay < 0:
			v.errorf(at("delay"), "must be above 0, got %v", f.Delay)
		case spec.DelayExample != "" && f.Delay == 0:
			v.errorf(at("delay"), "missing; %s needs %s", f.Kind, spec.DelayExample)
		}
		if spec.Check != nil {
			for _, p := range spec.Check(f, FaultContext{Ensemble: e.Ensemble, Recipes: recipes}) {
				v.errorf(at(p.Field), "%s", p.Problem)
			}
		}
	}
}
