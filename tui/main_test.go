package tui

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The user's bookmarks are not the tests': the views read them from a
	// configuration directory of the tests' own.
	dir, err := os.MkdirTemp("", "zkherd-tui-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Setenv("HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	// A tea.Tick command (the notice timer, up to noticeFor) outlives the
	// program that issued it: Bubble Tea runs commands in goroutines it
	// does not cancel. It ends by itself when its timer fires.
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("charm.land/bubbletea/v2.Tick.func1")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
