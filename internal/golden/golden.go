// Package golden is the one golden-file helper of zkherd's tests: output
// compared with a file under testdata, rewritten when the tests run with
// -update (go test ./pkg/ -update), for reports, summaries, screens and
// messages.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files with the current output")

// Check compares got with testdata/<t.Name()>.golden (a subtest's name
// is a directory).
func Check(t testing.TB, got []byte) {
	t.Helper()
	File(t, filepath.Join("testdata", filepath.FromSlash(t.Name())+".golden"), got)
}

// File compares got with the golden file at path, or rewrites it under
// -update.
func File(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it, if the change is meant)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
