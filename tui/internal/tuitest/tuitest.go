// Package tuitest holds what the interface's tests share: golden files
// (testdata/<Test>/<case>.golden, rewritten with -update), recorded
// snapshots to feed views with, key presses, and a fixed, colourless
// rendering so that goldens do not depend on the terminal.
package tuitest

import (
	"bytes"
	"embed"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/internal/golden"
	"github.com/zkherd/zkherd/tui/common"
)

//go:embed testdata/*.json testdata/*.jsonl
var fixtures embed.FS

// Sizes are the terminal sizes every view is checked at.
var Sizes = []struct {
	Name          string
	Width, Height int
}{
	{"80x24", 80, 24},
	{"120x40", 120, 40},
}

// Plain renders s as a terminal with the NoTTY profile shows it: no colour,
// no attributes. Golden files hold this.
func Plain(s string) string {
	var b bytes.Buffer
	w := colorprofile.Writer{Forward: &b, Profile: colorprofile.NoTTY}
	w.WriteString(s)
	return b.String()
}

// ASCII renders s as the ASCII profile (NO_COLOR) does: attributes such as
// bold and reverse video kept, colours dropped.
func ASCII(s string) string {
	var b bytes.Buffer
	w := colorprofile.Writer{Forward: &b, Profile: colorprofile.ASCII}
	w.WriteString(s)
	return b.String()
}

var sgr = regexp.MustCompile("\x1b\\[([0-9;:]*)m")

// Screen is Plain(s) followed by a line naming the lines drawn in reverse
// video (the cursor rows, which plain text cannot show), for golden files.
func Screen(s string) string {
	var rev []string
	for i, line := range strings.Split(ASCII(s), "\n") {
		for _, m := range sgr.FindAllStringSubmatch(line, -1) {
			if slices.Contains(strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }), "7") {
				rev = append(rev, strconv.Itoa(i+1))
				break
			}
		}
	}
	return Plain(s) + "\n-- reverse video on lines: " + strings.Join(rev, ", ") + "\n"
}

// Golden compares got with testdata/<t.Name()>.golden, or rewrites the
// file when the test runs with -update.
func Golden(t *testing.T, got string) {
	t.Helper()
	golden.Check(t, []byte(got))
}

// CheckSize fails unless screen has exactly height lines of width cells.
func CheckSize(t *testing.T, screen string, width, height int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != height {
		t.Errorf("screen has %d lines, want %d", len(lines), height)
	}
	for i, l := range lines {
		if w := common.Width(l); w != width {
			t.Errorf("line %d is %d cells wide, want %d: %q", i+1, w, width, l)
		}
	}
}

// Cluster loads a recorded cluster snapshot: standalone (one server, a
// fair lock with a wrong and a missing watch, a herd, a queue),
// ensemble3 (three members) or ensemble3_member_down (one member killed,
// a lock holder's client killed).
func Cluster(t testing.TB, name string) *inspect.Snapshot {
	t.Helper()
	data, err := fixtures.ReadFile("testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var s inspect.Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &s
}

// Key returns the key press that prints as s: "j", "enter", "tab",
// "shift+tab", "esc", "backspace", "up", "down", "pgdown", "ctrl+c".
func Key(s string) tea.KeyPressMsg {
	special := map[string]tea.Key{
		"enter":     {Code: tea.KeyEnter},
		"tab":       {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
		"esc":       {Code: tea.KeyEscape},
		"backspace": {Code: tea.KeyBackspace},
		"up":        {Code: tea.KeyUp},
		"down":      {Code: tea.KeyDown},
		"left":      {Code: tea.KeyLeft},
		"right":     {Code: tea.KeyRight},
		"pgdown":    {Code: tea.KeyPgDown},
		"pgup":      {Code: tea.KeyPgUp},
		"ctrl+c":    {Code: 'c', Mod: tea.ModCtrl},
		"space":     {Code: tea.KeySpace, Text: " "},
	}
	if k, ok := special[s]; ok {
		return tea.KeyPressMsg(k)
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}
