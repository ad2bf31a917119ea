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

	var files []string
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d Go files in the module, want its sources", len(files))
	}
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
			rel := filepath.ToSlash(strings.TrimPrefix(f, "../"))
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
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
