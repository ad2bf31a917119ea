package fourlw

// UsesAdmin exposes Client.usesAdmin to the external tests.
func UsesAdmin(c *Client, cmd Command) bool { return c.usesAdmin(cmd) }

// AdminOf exposes Member.admin to the external tests.
func AdminOf(m Member) *Admin { return m.admin() }
