// Package credentials finds the digest credentials a command uses: from
// --auth, from a file (--auth-file) or from ZKHERD_AUTH. A password on
// the command line is visible to every local user in ps, so the file and
// the environment variable are the ways to keep it private; a file that
// others may read is refused, as ssh refuses a private key.
package credentials

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/zkherd/zkherd/internal/exit"
)

// EnvVar is the environment variable read when neither --auth nor
// --auth-file is given.
const EnvVar = "ZKHERD_AUTH"

// ErrBad is matched (errors.Is) by every error of Resolve. The messages
// name the source and the fix, never the password, and read as they are.
var ErrBad = errors.New("credentials: bad credentials")

// badError names the values at fault as {auth}, {auth-file}
// (exit.Input): the command names them its way, as its flags.
type badError struct{ err *exit.InputError }

func (e badError) Error() string        { return e.err.Error() }
func (e badError) Unwrap() error        { return e.err }
func (e badError) Is(target error) bool { return target == ErrBad }

func bad(format string, a ...any) error { return badError{exit.Input(format, a...)} }

// Source is where Resolve looks.
type Source struct {
	Flag string              // --auth
	File string              // --auth-file
	Env  func(string) string // os.Getenv; nil: no environment
}

// Resolve returns "user:password", or "" when no source gives one. --auth
// and --auth-file together are refused (which one was meant is unknown);
// either wins over ZKHERD_AUTH. The file holds user:password on its first
// line and must be readable by its owner only (mode 0600 or 0400).
func Resolve(s Source) (string, error) {
	if s.Flag != "" && s.File != "" {
		return "", bad("{auth} and {auth-file} both given: keep one")
	}
	// from names the source in a message: a format and its argument.
	var auth, from, fromArg string
	switch {
	case s.Flag != "":
		auth, from = s.Flag, "{auth}%s"
	case s.File != "":
		a, err := readFile(s.File)
		if err != nil {
			return "", err
		}
		auth, from, fromArg = a, "{auth-file} %s", s.File
	case s.Env != nil && s.Env(EnvVar) != "":
		auth, from, fromArg = s.Env(EnvVar), "%s", EnvVar
	default:
		return "", nil
	}
	user, pass, found := strings.Cut(auth, ":")
	if !found || user == "" || pass == "" {
		return "", bad(from+": expected user:password (digest scheme)", fromArg)
	}
	return auth, nil
}

func readFile(name string) (string, error) {
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", bad("{auth-file} %s: no such file", name)
	case err != nil:
		return "", bad("{auth-file} %s: cannot read it (%v)", name, errors.Unwrap(err))
	case !st.Mode().IsRegular():
		return "", bad("{auth-file} %s: not a regular file", name)
	case st.Mode().Perm()&0o077 != 0:
		return "", bad("{auth-file} %s: mode %04o lets other users read the password: chmod 600 %s", name, st.Mode().Perm(), name)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", bad("{auth-file} %s: cannot read it (%v)", name, errors.Unwrap(err))
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", bad("{auth-file} %s: empty: write user:password on its first line", name)
	}
	return line, nil
}
