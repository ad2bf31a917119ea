// Package keymap holds the key bindings shared by every zkherd screen.
package keymap

import "charm.land/bubbles/v2/key"

// KeyMap is the set of bindings. Views read the ones they act on and list
// them in the bottom help bar.
type KeyMap struct {
	Help     key.Binding
	Filter   key.Binding
	Command  key.Binding
	Back     key.Binding
	Quit     key.Binding
	Up       key.Binding
	Down     key.Binding
	Left     key.Binding
	Right    key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	NextPane key.Binding
	PrevPane key.Binding
	// HistoryBack and HistoryForward move through the places visited (as
	// k9s's [ and ]): a drill-down, a view switch, a directory opened.
	HistoryBack    key.Binding
	HistoryForward key.Binding
	Open           key.Binding
	Refresh        key.Binding
	Delete         key.Binding
	Edit           key.Binding
	Yes            key.Binding
	No             key.Binding
	// Session drills down to the session of the node or contender under
	// the cursor.
	Session key.Binding
	// Views jumps to the nth view (1-based keys "1".."9").
	Views []key.Binding
}

// DefaultKeyMap returns zkherd's bindings: ? help, / filter, : command,
// esc back, q quit, arrows and hjkl, tab between panes.
func DefaultKeyMap() *KeyMap {
	km := &KeyMap{
		Help:           key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Filter:         key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Command:        key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command")),
		Back:           key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Quit:           key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Up:             key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:           key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Left:           key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "parent")),
		Right:          key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "open")),
		PageUp:         key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:       key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d", "space"), key.WithHelp("pgdn", "page down")),
		Top:            key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:         key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),
		NextPane:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev pane")),
		HistoryBack:    key.NewBinding(key.WithKeys("[", "backspace"), key.WithHelp("[/bksp", "previous place")),
		HistoryForward: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next place")),
		Open:           key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Refresh:        key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh")),
		Delete:         key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "delete")),
		Edit:           key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "set data")),
		Yes:            key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:             key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "no")),
		Session:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "session")),
	}
	for _, k := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"} {
		km.Views = append(km.Views, key.NewBinding(key.WithKeys(k)))
	}
	return km
}

// Navigation is the bindings every list shares, for the full help.
func (km *KeyMap) Navigation() []key.Binding {
	return []key.Binding{km.Up, km.Down, km.PageUp, km.PageDown, km.Top, km.Bottom}
}

// Global is the bindings the root model handles, for the full help.
func (km *KeyMap) Global() []key.Binding {
	return []key.Binding{km.Help, km.Filter, km.Command, km.Back, km.NextPane, km.HistoryBack, km.HistoryForward, km.Quit}
}
