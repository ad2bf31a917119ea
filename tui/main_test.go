package tui

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// A tea.Tick command (the notice timer, up to noticeFor) outlives the
	// program that issued it: Bubble Tea runs commands in goroutines it
	// does not cancel. It ends by itself when its timer fires.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("charm.land/bubbletea/v2.Tick.func1"))
}
