package tui

import (
	"testing"

	"github.com/zkherd/zkherd/tui/common"
)

// TestErrorClearsOnNextKey: an error about what the user did (an unknown
// command) goes with the next key press; a notice about the servers stays.
func TestErrorClearsOnNextKey(t *testing.T) {
	m := screen(t, 80, 24, inspectViews, common.NoticeMsg{Text: `unknown command "x"`, Error: true})
	if m.notice == "" {
		t.Fatal("the error was not shown")
	}
	m = screen(t, 80, 24, inspectViews, common.NoticeMsg{Text: `unknown command "x"`, Error: true}, keys("j")[0])
	if m.notice != "" {
		t.Errorf("notice %q outlived the next key press", m.notice)
	}
	snap := missingCaps(t)
	m = screen(t, 80, 24, inspectViews, snap, keys("j")[0])
	if m.notice == "" {
		t.Error("a notice about the servers went with a key press")
	}
}
