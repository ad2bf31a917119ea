package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRecipeNamedInFewFiles: a recipe is one entry of recipeSpecs plus
// its workload, registered with one line in loadgen's workloads table.
// Outside package scenarios, only that table (and, for the recipes that
// grant to several holders at once, loadgen's cross-process holder
// check) names a recipe; inside it, only the recipes with parameters of
// their own are named beyond recipes.go (their YAML block, its defaults
// and its rules). A recipe named anywhere else is a switch a new recipe
// would have to be added to.
func TestRecipeNamedInFewFiles(t *testing.T) {
	idents := map[Recipe]string{FairLock: "FairLock", HerdLock: "HerdLock", HerdChildren: "HerdChildren",
		RWLock: "RWLock", Semaphore: "Semaphore", Queue: "Queue", Election: "Election", Barrier: "Barrier"}
	if len(idents) != len(Recipes()) {
		t.Fatalf("the test knows %d recipes, Recipes() lists %d: add the new one to idents", len(idents), len(Recipes()))
	}
	withParams := map[Recipe]bool{RWLock: true, Semaphore: true, Queue: true, Barrier: true}
	paramFiles := []string{"scenarios/parse.go", "scenarios/validate.go", "scenarios/spec.go", "scenarios/overrides.go"}

	files := moduleSources(t)
	for r, ident := range idents {
		outside := regexp.MustCompile(`\bscenarios\.` + ident + `\b`)
		inside := regexp.MustCompile(`\b` + ident + `\b`)
		allowed := []string{"scenarios/recipes.go", "loadgen/workload.go"}
		if r.Spec().Limited != "" {
			allowed = append(allowed, "loadgen/occupancy.go")
		}
		if withParams[r] {
			allowed = append(allowed, paramFiles...)
		}
		var named []string
		for _, f := range files {
			rel, data := f.path, f.data
			re := outside
			if strings.HasPrefix(rel, "scenarios/") && !strings.Contains(strings.TrimPrefix(rel, "scenarios/"), "/") {
				re = inside
			}
			if re.Match(data) {
				named = append(named, rel)
			}
		}
		for _, f := range named {
			if !slices.Contains(allowed, f) {
				t.Errorf("%s is named in %s: read it from its RecipeSpec (scenarios/recipes.go) or its workload instead; named in %v", r, f, named)
			}
		}
	}
}

// srcFile is a Go file of the module, by its path from the module's root.
type srcFile struct {
	path string
	data []byte
}

// moduleSources reads the module's Go files, tests and testdata left out.
func moduleSources(t *testing.T) []srcFile {
	t.Helper()
	var files []srcFile
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		files = append(files, srcFile{filepath.ToSlash(strings.TrimPrefix(path, "../")), data})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d Go files in the module, want its sources", len(files))
	}
	return files
}

// TestFaultKindNamedInFewFiles: a fault kind is its constant and one
// FaultKindSpec entry (scenarios/fault.go) plus its action, registered
// in faults' actions table (faults/executor.go, with the method that
// carries it out there or in a file of its own). Nothing else names a
// kind but the foreign client, which carries out the foreign kinds
// (faults/foreign.go, loadgen/foreign.go): anything else reads the
// kind's properties from its entry.
func TestFaultKindNamedInFewFiles(t *testing.T) {
	// Each kind's constant, as fault.go declares it (a new kind needs no
	// edit here).
	src, err := os.ReadFile("fault.go")
	if err != nil {
		t.Fatal(err)
	}
	idents := map[FaultKind]string{}
	for _, m := range regexp.MustCompile(`(?m)^\t([A-Z]\w*)\s+FaultKind\s*=\s*"([^"]+)"`).FindAllSubmatch(src, -1) {
		idents[FaultKind(m[2])] = string(m[1])
	}
	for _, k := range FaultKinds() {
		if idents[k] == "" {
			t.Fatalf("fault kind %s: no constant of type FaultKind declared for it in fault.go", k)
		}
	}
	if len(idents) != len(FaultKinds()) {
		t.Fatalf("fault.go declares %d fault kinds, FaultKinds() lists %d", len(idents), len(FaultKinds()))
	}
	files := moduleSources(t)
	for k, ident := range idents {
		outside := regexp.MustCompile(`\bscenarios\.` + ident + `\b`)
		inside := regexp.MustCompile(`\b` + ident + `\b`)
		allowed := []string{"scenarios/fault.go", "faults/executor.go"}
		if k.Foreign() {
			allowed = append(allowed, "faults/foreign.go", "loadgen/foreign.go")
		}
		for _, f := range files {
			re := outside
			if strings.HasPrefix(f.path, "scenarios/") && !strings.Contains(strings.TrimPrefix(f.path, "scenarios/"), "/") {
				re = inside
			}
			if re.Match(f.data) && !slices.Contains(allowed, f.path) {
				t.Errorf("fault kind %s is named in %s: read its FaultKindSpec (scenarios/fault.go) instead", k, f.path)
			}
		}
	}
}
