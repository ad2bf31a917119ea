// Package bookmarks keeps the inspector's bookmarked paths in the user's
// configuration directory (os.UserConfigDir: $XDG_CONFIG_HOME/zkherd or
// ~/.config/zkherd on Linux, ~/Library/Application Support/zkherd on macOS),
// one path a line, so that they last from one session to the next and can
// be edited by hand.
package bookmarks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// fileName is the bookmarks file in the zkherd configuration directory.
const fileName = "bookmarks"

// Store is the bookmarks, shared by the views that add and list them. Its
// methods are safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	file  string // "" when there is no configuration directory
	paths []string
	err   error // why the file could not be read
}

// Open reads the bookmarks of the user's configuration directory. A missing
// file is no bookmarks; a file that cannot be read is kept as it is (Err
// says why) and bookmarks added meanwhile are kept for the session only.
func Open() *Store {
	dir, err := os.UserConfigDir()
	if err != nil {
		return &Store{err: fmt.Errorf("bookmarks: no configuration directory (%w): kept until exit only", err)}
	}
	return OpenFile(filepath.Join(dir, "zkherd", fileName))
}

// OpenFile reads the bookmarks of file.
func OpenFile(file string) *Store {
	s := &Store{file: file}
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		s.err = fmt.Errorf("bookmarks: %w", err)
	default:
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !slices.Contains(s.paths, l) {
				s.paths = append(s.paths, l)
			}
		}
	}
	return s
}

// File is where the bookmarks are kept ("" when nowhere).
func (s *Store) File() string { return s.file }

// Err says why the bookmarks file could not be read, nil if it could.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Paths are the bookmarks, in the order they were added.
func (s *Store) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

// Has reports whether p is bookmarked.
func (s *Store) Has(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.paths, p)
}

// Toggle bookmarks p, or removes its bookmark, and saves the file. The
// change holds for the session even when saving fails (err says why).
func (s *Store) Toggle(p string) (added bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.paths, p); i >= 0 {
		s.paths = slices.Delete(s.paths, i, i+1)
	} else {
		s.paths, added = append(s.paths, p), true
	}
	return added, s.save()
}

// save writes the file whole through a temporary file in the same
// directory, so that a crash leaves the old file or the new one. A file
// that could not be read is not overwritten.
func (s *Store) save() error {
	switch {
	case s.err != nil:
		return s.err
	case s.file == "":
		return errors.New("bookmarks: no configuration directory: kept until exit only")
	}
	if err := os.MkdirAll(filepath.Dir(s.file), 0o700); err != nil {
		return fmt.Errorf("bookmarks: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.file), fileName+".*")
	if err != nil {
		return fmt.Errorf("bookmarks: %w", err)
	}
	text := "# zkherd inspect bookmarks, one path a line (b in the Tree adds and removes)\n" + strings.Join(s.paths, "\n") + "\n"
	_, err = tmp.WriteString(text)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.file)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("bookmarks: %w", err)
	}
	return nil
}
