package fourlw

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Command is a four-letter word zkherd knows how to ask and parse.
type Command string

// Commands. Each has an AdminServer equivalent (see AdminCommand).
const (
	CmdSrvr Command = "srvr"
	CmdStat Command = "stat"
	CmdMntr Command = "mntr"
	CmdCons Command = "cons"
	CmdWchp Command = "wchp"
	CmdWchc Command = "wchc"
	CmdWchs Command = "wchs"
	CmdDump Command = "dump"
	CmdConf Command = "conf"
	CmdEnvi Command = "envi"
	CmdRuok Command = "ruok"
	CmdIsro Command = "isro"
)

// AllCommands lists every Command. None of them changes server state
// (crst, srst and the trace-mask commands are left out on purpose).
func AllCommands() []Command {
	return []Command{CmdSrvr, CmdStat, CmdMntr, CmdCons, CmdWchp, CmdWchc, CmdWchs, CmdDump, CmdConf, CmdEnvi, CmdRuok, CmdIsro}
}

// Client asks one member, with the four-letter word first and, once the
// server has refused it as not whitelisted, through the AdminServer when
// the member has one. It is safe for concurrent use.
type Client struct {
	member Member
	admin  *Admin

	mu       sync.Mutex
	viaAdmin map[Command]bool // four-letter words refused, answered by the AdminServer instead
}

// NewClient returns a client of m.
func NewClient(m Member) *Client {
	c := &Client{member: m, viaAdmin: map[Command]bool{}, admin: m.admin()}
	return c
}

// Member returns the member c asks.
func (c *Client) Member() Member { return c.member }

// preferAdmin makes c skip the four-letter word cmd (the probe found it
// refused).
func (c *Client) preferAdmin(cmd Command) {
	if c.admin == nil {
		return
	}
	c.mu.Lock()
	c.viaAdmin[cmd] = true
	c.mu.Unlock()
}

func (c *Client) usesAdmin(cmd Command) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.viaAdmin[cmd]
}

// ask runs cmd as a four-letter word, parsed by parse, or through the
// AdminServer with admin.
func ask[T any](ctx context.Context, c *Client, cmd Command, parse func(string) (T, error), admin func(Admin, context.Context) (T, error)) (T, error) {
	var refused *ErrNotWhitelisted
	if !c.usesAdmin(cmd) {
		reply, err := QueryTLS(ctx, c.member.Addr, string(cmd), c.member.TLS)
		if err == nil {
			return parse(reply)
		}
		if !errors.As(err, &refused) || c.admin == nil {
			var zero T
			return zero, err
		}
		c.preferAdmin(cmd)
	}
	v, err := admin(*c.admin, ctx)
	if err != nil && refused != nil {
		err = fmt.Errorf("%w; the AdminServer did not answer either: %w", refused, err)
	}
	return v, err
}

// Srvr asks srvr (AdminServer: stats).
func (c *Client) Srvr(ctx context.Context) (Stat, error) {
	return ask(ctx, c, CmdSrvr, ParseSrvr, Admin.Stats)
}

// Stat asks stat (AdminServer: stats).
func (c *Client) Stat(ctx context.Context) (Stat, error) {
	return ask(ctx, c, CmdStat, ParseStat, Admin.Stats)
}

// Mntr asks mntr (AdminServer: monitor).
func (c *Client) Mntr(ctx context.Context) (Mntr, error) {
	return ask(ctx, c, CmdMntr, ParseMntr, Admin.Monitor)
}

// Cons asks cons (AdminServer: connections).
func (c *Client) Cons(ctx context.Context) ([]Conn, error) {
	return ask(ctx, c, CmdCons, ParseCons, Admin.Connections)
}

// Wchp asks wchp (AdminServer: watches_by_path).
func (c *Client) Wchp(ctx context.Context) (WatchesByPath, error) {
	return ask(ctx, c, CmdWchp, ParseWchp, Admin.WatchesByPath)
}

// Wchc asks wchc (AdminServer: watches).
func (c *Client) Wchc(ctx context.Context) (WatchesBySession, error) {
	return ask(ctx, c, CmdWchc, ParseWchc, Admin.Watches)
}

// Wchs asks wchs (AdminServer: watch_summary).
func (c *Client) Wchs(ctx context.Context) (WatchSummary, error) {
	return ask(ctx, c, CmdWchs, ParseWchs, Admin.WatchSummary)
}

// Dump asks dump (AdminServer: dump, without connections).
func (c *Client) Dump(ctx context.Context) (Dump, error) {
	return ask(ctx, c, CmdDump, ParseDump, Admin.Dump)
}

// Conf asks conf (AdminServer: configuration).
func (c *Client) Conf(ctx context.Context) (Conf, error) {
	return ask(ctx, c, CmdConf, ParseConf, Admin.Configuration)
}
