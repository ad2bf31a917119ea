package scenarios

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// Lookup returns the scenario nameOrPath names: a built-in scenario, or a
// YAML file. Anything with a path separator or a .yaml or .yml extension is
// a file; otherwise a built-in name comes first and an existing file second.
// An unknown name is an error (matching ErrUnknown) that lists the
// built-in names.
func Lookup(nameOrPath string) (Spec, error) {
	if looksLikePath(nameOrPath) {
		return Load(nameOrPath)
	}
	if s, ok := Builtin(nameOrPath); ok {
		return s, nil
	}
	if _, err := os.Stat(nameOrPath); err == nil {
		return Load(nameOrPath)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Spec{}, pkgerr.Wrap("scenarios", err)
	}
	hint := ""
	if s := suggest(nameOrPath, Names()); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	return Spec{}, pkgerr.Wrap("scenarios", fmt.Errorf("%w %q%s; built-in scenarios are %s, or give the path of a YAML file",
		ErrUnknown, nameOrPath, hint, strings.Join(Names(), ", ")))
}

func looksLikePath(s string) bool {
	ext := strings.ToLower(filepath.Ext(s))
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) || ext == ".yaml" || ext == ".yml"
}
