// Package styles holds the lipgloss styles of every zkherd screen.
//
// Colours are chosen for dark and light terminals alike and never carry
// meaning alone: selection is reverse video, problems are prefixed with a
// marker ("!", "x"), so the screens read the same with NO_COLOR set, when
// Bubble Tea downsamples them to the ASCII colour profile.
package styles

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Styles is every style the views use.
type Styles struct {
	TabBar      lipgloss.Style
	TabActive   lipgloss.Style
	TabInactive lipgloss.Style
	Title       lipgloss.Style // a view's heading line
	Header      lipgloss.Style // table column headings
	Selected    lipgloss.Style // the row under the cursor in the focused pane
	SelectedDim lipgloss.Style // the row under the cursor in an unfocused pane
	Dim         lipgloss.Style
	Label       lipgloss.Style // "key:" in key/value lines
	OK          lipgloss.Style
	Warn        lipgloss.Style
	Bad         lipgloss.Style
	Spark       lipgloss.Style
	Bar         lipgloss.Style
	Pane        lipgloss.Style
	PaneFocused lipgloss.Style
	StatusBar   lipgloss.Style
	Notice      lipgloss.Style
	Prompt      lipgloss.Style
	Help        help.Styles
}

// DefaultStyles returns zkherd's styles.
func DefaultStyles() *Styles {
	var (
		accent = lipgloss.Color("#7D56F4")
		green  = lipgloss.Color("#04B575")
		yellow = lipgloss.Color("#E5C07B")
		red    = lipgloss.Color("#FF5F87")
		grey   = lipgloss.Color("#8A8A8A")
	)
	s := &Styles{
		TabBar:      lipgloss.NewStyle(),
		TabActive:   lipgloss.NewStyle().Bold(true).Reverse(true),
		TabInactive: lipgloss.NewStyle().Foreground(grey),
		Title:       lipgloss.NewStyle().Bold(true).Foreground(accent),
		Header:      lipgloss.NewStyle().Bold(true).Underline(true),
		Selected:    lipgloss.NewStyle().Reverse(true),
		SelectedDim: lipgloss.NewStyle().Underline(true),
		Dim:         lipgloss.NewStyle().Faint(true),
		Label:       lipgloss.NewStyle().Foreground(grey),
		OK:          lipgloss.NewStyle().Foreground(green),
		Warn:        lipgloss.NewStyle().Foreground(yellow),
		Bad:         lipgloss.NewStyle().Foreground(red).Bold(true),
		Spark:       lipgloss.NewStyle().Foreground(accent),
		Bar:         lipgloss.NewStyle().Foreground(green),
		StatusBar:   lipgloss.NewStyle().Foreground(grey),
		Notice:      lipgloss.NewStyle().Foreground(yellow),
		Prompt:      lipgloss.NewStyle().Bold(true),
		Help:        help.DefaultDarkStyles(),
	}
	return s
}
