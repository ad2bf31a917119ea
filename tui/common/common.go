// Package common holds what every zkherd screen shares: its size, styles
// and key bindings, the messages that carry live data, and small text
// helpers.
package common

import (
	"github.com/zkherd/zkherd/tui/keymap"
	"github.com/zkherd/zkherd/tui/styles"
)

// Common is embedded by every view and component.
type Common struct {
	Width, Height int
	Styles        *styles.Styles
	KeyMap        *keymap.KeyMap
}

// New returns a Common with the default styles and key bindings.
func New(width, height int) Common {
	return Common{Width: width, Height: height, Styles: styles.DefaultStyles(), KeyMap: keymap.DefaultKeyMap()}
}

// SetSize records the space the owner has been given.
func (c *Common) SetSize(width, height int) {
	c.Width, c.Height = max(width, 0), max(height, 0)
}
