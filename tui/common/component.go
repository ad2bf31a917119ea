package common

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Component is one view of a screen, the way the root sees it (soft-serve's
// common.Component: a model, its help keys and SetSize). The root keeps its
// views in one registered list and talks to each through this interface
// only, so adding a view is one file and one line in that list.
//
// Update mutates the component in place: the root holds pointers, so a
// view's state is never lost to a forgotten assignment.
type Component interface {
	Init() tea.Cmd
	Update(tea.Msg) tea.Cmd
	// View draws the component into exactly its size.
	View() string
	// Title names it in the tab bar.
	Title() string
	// ShortHelp and FullHelp list its own keys (help.KeyMap).
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
	SetSize(width, height int)
	// Place is where the view is, for the history: location changes when
	// the user goes somewhere (the Tree's directory; "" for a view that is
	// one place), target is what a ShowMsg needs to come back to it (the
	// node or row under the cursor). A view without places returns "", "".
	Place() (location, target string)
}

// Placer is a view model with places (Component.Place); optional.
type Placer interface {
	Place() (location, target string)
}

// ViewModel is what a view's concrete type provides: Bubble Tea's Update
// that returns the view's own type (so its tests and parents need no type
// assertion), a View drawn as text, a title and its keys. Init is optional.
type ViewModel[M any] interface {
	Update(tea.Msg) (M, tea.Cmd)
	View() string
	Title() string
	ShortHelp() []key.Binding
}

// sizer is a pointer to a view whose SetSize has a pointer receiver.
type sizer[M any] interface {
	*M
	SetSize(width, height int)
}

// AsComponent wraps a view's concrete model as a Component:
// AsComponent(locks.New(c)).
func AsComponent[M ViewModel[M], P sizer[M]](m M) Component {
	return &component[M, P]{m: m}
}

type component[M ViewModel[M], P sizer[M]] struct{ m M }

func (c *component[M, P]) Init() tea.Cmd {
	if i, ok := any(c.m).(interface{ Init() tea.Cmd }); ok {
		return i.Init()
	}
	return nil
}

func (c *component[M, P]) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	c.m, cmd = c.m.Update(msg)
	return cmd
}

func (c *component[M, P]) Place() (string, string) {
	if p, ok := any(c.m).(Placer); ok {
		return p.Place()
	}
	return "", ""
}

func (c *component[M, P]) View() string              { return c.m.View() }
func (c *component[M, P]) Title() string             { return c.m.Title() }
func (c *component[M, P]) ShortHelp() []key.Binding  { return c.m.ShortHelp() }
func (c *component[M, P]) FullHelp() [][]key.Binding { return [][]key.Binding{c.m.ShortHelp()} }
func (c *component[M, P]) SetSize(width, height int) { P(&c.m).SetSize(width, height) }
