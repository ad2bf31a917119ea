package tui

import (
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/zkherd/zkherd/tui/keymap"
)

// TestFullHelpViewMeaning: a key the active view gives its own meaning
// (the load dashboard's tab cycles phases, its / filters phases) is listed
// in the full help with that meaning, as the short help says, not with
// the global one ("tab next pane").
func TestFullHelpViewMeaning(t *testing.T) {
	km := keymap.DefaultKeyMap()
	h := helpKeys{
		view: []key.Binding{
			key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "phase")),
			key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter phases")),
			key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "waiters")),
		},
		global: km.Global(), nav: km.Navigation(), quit: km.Quit,
	}
	said := map[string][]string{}
	for _, col := range h.FullHelp() {
		for _, b := range col {
			said[b.Help().Key] = append(said[b.Help().Key], b.Help().Desc)
		}
	}
	for k, want := range map[string]string{"tab": "phase", "/": "filter phases", "↑/↓": "waiters"} {
		if got := said[k]; len(got) != 1 || got[0] != want {
			t.Errorf("full help lists %s as %q, want %q once", k, got, want)
		}
	}
}
