package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/metrics"
)

// DirError is returned by WriteDir when the output directory cannot be
// written. It matches ErrUnwritable and the underlying error (errors.Is).
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string { return e.input().Error() }

// input is the message naming the value the user gave (the output
// directory, "out"), which the command names its way (exit.Named).
func (e *DirError) input() *exit.InputError {
	return exit.Input("report: cannot write to %s: %v; choose another {out}", e.Dir, e.Err)
}

func (e *DirError) Unwrap() []error { return []error{ErrUnwritable, e.Err, e.input()} }

// WriteDir writes every file of a run into dir, creating it if needed:
// report.json, report.html and, for each scenario with metrics and each
// phase, <scenario>-<phase>.hgrm (milliseconds, HdrHistogram's plotter
// format; for open-model phases measured from each operation's intended
// start, with <scenario>-<phase>-service.hgrm measured from the call), and
// <scenario>-<phase>.hlog (interval
// log, microseconds, HdrHistogram's log tools). It first checks that dir is
// writable; on any failure it removes what it wrote and the directories it
// created, so nothing is left behind.
func WriteDir(dir string, run *Run) (err error) {
	created, err := prepareDir(dir)
	if err != nil {
		return err
	}
	var written []string
	defer func() {
		if err == nil {
			return
		}
		for _, f := range written {
			os.Remove(f)
		}
		removeCreated(created)
	}()
	write := func(name string, fn func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		if err := writeFile(path, fn); err != nil {
			return &DirError{Dir: dir, Err: err}
		}
		written = append(written, path)
		return nil
	}

	if err := write("report.json", func(w io.Writer) error { return WriteJSON(w, run) }); err != nil {
		return err
	}
	used := map[string]bool{}
	histories := HistoryFiles(run)
	for i, s := range run.Scenarios {
		base := fileBase(s.Name, used)
		if h := s.History; h != nil {
			if err := write(histories[i], h.WriteJSONL); err != nil {
				return err
			}
		}
		m := s.Metrics
		if m == nil {
			continue
		}
		for _, p := range m.Phases {
			name := base + "-" + string(p)
			intended := m.Totals[p].HasCorrection
			if err := write(name+".hgrm", func(w io.Writer) error { return m.WriteHgrm(w, p, intended) }); err != nil {
				return err
			}
			if intended {
				if err := write(name+"-service.hgrm", func(w io.Writer) error { return m.WriteHgrm(w, p, false) }); err != nil {
					return err
				}
			}
			if errors.Is(m.WriteHlog(io.Discard, p), metrics.ErrNoPhase) {
				continue // a merged result (distributed run) has no interval logs
			}
			if err := write(name+".hlog", func(w io.Writer) error { return m.WriteHlog(w, p) }); err != nil {
				return err
			}
		}
	}
	return write("report.html", func(w io.Writer) error { return WriteHTML(w, run) })
}

// prepareDir creates dir if needed and checks that a file can be created in
// it. It returns the directories it created, deepest first.
func prepareDir(dir string) ([]string, error) {
	if dir == "" {
		return nil, &DirError{Dir: `""`, Err: errors.New("no directory given")}
	}
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, os.ErrNotExist) {
			break
		}
		created = append(created, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		removeCreated(created)
		return nil, &DirError{Dir: dir, Err: unwrapPath(err)}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		removeCreated(created)
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, &DirError{Dir: dir, Err: unwrapPath(err)}
	}
	f, err := os.CreateTemp(dir, ".zkherd-write-check-*")
	if err != nil {
		removeCreated(created)
		return nil, &DirError{Dir: dir, Err: unwrapPath(err)}
	}
	name := f.Name()
	_, werr := f.Write([]byte("ok"))
	cerr := f.Close()
	os.Remove(name)
	if err := errors.Join(werr, cerr); err != nil {
		removeCreated(created)
		return nil, &DirError{Dir: dir, Err: unwrapPath(err)}
	}
	return created, nil
}

func removeCreated(created []string) {
	for _, d := range created { // deepest first
		os.Remove(d)
	}
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeFile writes path through a temporary file renamed into place, so a
// failed write leaves no half-written file.
func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return unwrapPath(err)
	}
	tmp := f.Name()
	err = fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

// fileBase turns a scenario name into a file name part: letters, digits,
// '.', '_' and '-' kept, anything else '_', and "-2", "-3", ... appended to
// names already used.
func fileBase(name string, used map[string]bool) string {
	b := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
	b = strings.TrimLeft(b, ".")
	if b == "" {
		b = "scenario"
	}
	base := b
	for i := 2; used[b]; i++ {
		b = fmt.Sprintf("%s-%d", base, i)
	}
	used[b] = true
	return b
}

// HistoryFiles names each scenario's history file in a report directory:
// history.jsonl, or <scenario>-history.jsonl when the report has several.
func HistoryFiles(run *Run) []string {
	used := map[string]bool{}
	names := make([]string, len(run.Scenarios))
	for i, s := range run.Scenarios {
		base := fileBase(s.Name, used)
		names[i] = "history.jsonl"
		if len(run.Scenarios) > 1 {
			names[i] = base + "-history.jsonl"
		}
	}
	return names
}
