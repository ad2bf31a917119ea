package exit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// advisers are the packages that turn errors into advice and may name
// the command's flags: package main (the repository's root) and
// internal/usermsg (the likely fix of a library's failure). Libraries
// name the values a user gave ({clients}: Inputf, Advice) and the
// command names them its way.
var advisers = map[string]bool{".": true, "internal/usermsg": true}

var flagInText = regexp.MustCompile(`(^|[\s(])--[a-z][a-z-]+`)

// TestLibrariesNameNoFlag: no string of a library (below package main)
// names a command-line flag: errors and notices name the value
// ({duration}) and the command names it (exit.Named, exit.Advice).
func TestLibrariesNameNoFlag(t *testing.T) {
	root := filepath.Join("..", "..")
	found := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if advisers[rel] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && flagInText.MatchString(s) {
				found[rel] = append(found[rel], filepath.Base(path)+": "+s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, lits := range found {
		t.Errorf("%s names flags (name the value as {name}: exit.Inputf, exit.Advice):\n  %s", pkg, strings.Join(lits, "\n  "))
	}
}
