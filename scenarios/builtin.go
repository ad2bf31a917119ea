package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

// The built-in scenarios are YAML files, so that they double as examples
// of the format (zkherd scenarios show NAME prints them).
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

type builtin struct {
	spec Spec
	src  []byte
}

// DocURL is where the scenario format is described, field by field:
// docs/SCENARIOS.md, kept in step with the parser by a test.
const DocURL = "https://github.com/zkherd/zkherd/blob/main/docs/SCENARIOS.md"

// builtins parses the embedded files once. A broken built-in is a bug
// caught by the tests, so it panics.
var builtins = sync.OnceValue(func() map[string]builtin {
	m := map[string]builtin{}
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		data, err := builtinFS.ReadFile(f)
		if err != nil {
			panic(err)
		}
		s, err := Parse(path.Base(f), data)
		if err != nil {
			panic(fmt.Sprintf("scenarios: built-in %s: %v", f, err))
		}
		if want := strings.TrimSuffix(path.Base(f), ".yaml"); s.Name != want {
			panic(fmt.Sprintf("scenarios: built-in %s is named %q", f, s.Name))
		}
		m[s.Name] = builtin{spec: s, src: data}
	}
	return m
})

// Names returns the names of the built-in scenarios, sorted.
func Names() []string {
	var names []string
	for name := range builtins() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Builtins returns every built-in scenario, sorted by name.
func Builtins() []Spec {
	var specs []Spec
	for _, name := range Names() {
		specs = append(specs, builtins()[name].spec)
	}
	return specs
}

// Builtin returns the built-in scenario called name.
func Builtin(name string) (Spec, bool) {
	b, ok := builtins()[name]
	return b.spec, ok
}

// BuiltinSource returns the YAML of the built-in scenario called name, as
// shipped: an example to copy and edit.
func BuiltinSource(name string) ([]byte, bool) {
	b, ok := builtins()[name]
	return slices.Clone(b.src), ok
}
