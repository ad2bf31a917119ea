package fourlw

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// probeReplyLimit is how much of each reply the probe reads: enough to
// recognise a refusal, without fetching a large wchp or dump.
const probeReplyLimit = 512

// Capability says whether one command answers on one member.
type Capability struct {
	Command Command
	FourLW  bool  // answers as a four-letter word
	Admin   bool  // its AdminServer equivalent answers
	Err     error // why the four-letter word did not answer, when it did not
}

// Available reports whether the command answers one way or the other.
func (c Capability) Available() bool { return c.FourLW || c.Admin }

// Fix returns the server configuration that would make the command
// answer, or "" when it does.
func (c Capability) Fix() string {
	if c.Available() {
		return ""
	}
	var refused *ErrNotWhitelisted
	if errors.As(c.Err, &refused) {
		return ConfigLine
	}
	return ""
}

// MemberCapabilities is what one member answers.
type MemberCapabilities struct {
	Member Member
	// Reachable is false when nothing answered; Err then says why.
	Reachable bool
	Err       error
	// NotServing is set when the server answered but has no quorum: its
	// commands are whitelisted, yet most return nothing useful for now.
	NotServing bool
	// AdminServer is true when the member's AdminServer answers; AdminErr
	// says why not when the member has an AdminURL.
	AdminServer bool
	AdminErr    error
	Commands    []Capability
}

// Capability returns what the probe found for cmd; ok is false when cmd
// was not probed.
func (m MemberCapabilities) Capability(cmd Command) (Capability, bool) {
	for _, c := range m.Commands {
		if c.Command == cmd {
			return c, true
		}
	}
	return Capability{}, false
}

// Missing returns the commands that answer neither way.
func (m MemberCapabilities) Missing() []Capability {
	var missing []Capability
	for _, c := range m.Commands {
		if !c.Available() {
			missing = append(missing, c)
		}
	}
	return missing
}

// Report says, in one line, what is unavailable on the member and how to
// enable it, or "" when everything answers.
func (m MemberCapabilities) Report() string {
	if !m.Reachable {
		return fmt.Sprintf("%s: unreachable: %v", m.Member, m.Err)
	}
	missing := m.Missing()
	var fallback []string
	for _, c := range m.Commands {
		if !c.FourLW && c.Admin {
			fallback = append(fallback, string(c.Command))
		}
	}
	var parts []string
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, c := range missing {
			names[i] = string(c.Command)
		}
		fix := fmt.Sprintf("add %q to zoo.cfg", ConfigLine)
		if !m.AdminServer {
			fix += ", or turn on the AdminServer: " + AdminConfigHint
		}
		parts = append(parts, fmt.Sprintf("%s unavailable (%s)", strings.Join(names, ", "), fix))
	}
	if len(fallback) > 0 {
		parts = append(parts, fmt.Sprintf("%s through the AdminServer (not in the 4lw whitelist)", strings.Join(fallback, ", ")))
	}
	if m.NotServing {
		parts = append(parts, "not serving requests (no quorum?)")
	}
	if len(parts) == 0 {
		return ""
	}
	return m.Member.String() + ": " + strings.Join(parts, "; ")
}

// Capabilities is what every member answers.
type Capabilities []MemberCapabilities

// ProbeMember probes one member; see Probe.
func ProbeMember(ctx context.Context, m Member, cmds ...Command) MemberCapabilities {
	if len(cmds) == 0 {
		cmds = AllCommands()
	}
	mc := MemberCapabilities{Member: m}
	if a := m.admin(); a != nil {
		mc.AdminErr = a.Ruok(ctx)
		mc.AdminServer = mc.AdminErr == nil
	}
	fourLW := true // the client port answers; false once it does not
	for _, cmd := range cmds {
		c := Capability{Command: cmd}
		if fourLW {
			_, err := query(ctx, m.Addr, string(cmd), probeReplyLimit, m.TLS)
			var refused *ErrNotWhitelisted
			switch {
			case err == nil:
				c.FourLW, mc.Reachable = true, true
			case errors.Is(err, ErrNotServing):
				c.FourLW, mc.Reachable, mc.NotServing = true, true, true
			case errors.As(err, &refused):
				c.Err, mc.Reachable = err, true
			default:
				// The server does not answer at all: no use asking more.
				c.Err, fourLW = err, false
				if mc.Err == nil {
					mc.Err = err
				}
			}
		} else {
			c.Err = mc.Err
		}
		c.Admin = mc.AdminServer && AdminCommand(string(cmd)) != ""
		mc.Commands = append(mc.Commands, c)
	}
	if mc.AdminServer {
		mc.Reachable = true
	}
	if mc.Reachable && !fourLW {
		mc.Err = nil // the AdminServer answers; Commands say which four-letter words do not
	}
	return mc
}
