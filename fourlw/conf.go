package fourlw

import (
	"fmt"
	"strings"
)

// Conf is the reply to conf (or envi): "key=value" lines, such as
// "maxClientCnxns" -> "0" or "server.1" -> "127.0.0.1:2888:3888:participant".
type Conf map[string]string

// ParseConf parses the reply to conf.
func ParseConf(reply string) (Conf, error) { return parseKeyValues("conf", reply) }

func parseKeyValues(cmd, reply string) (Conf, error) {
	c := Conf{}
	for _, line := range strings.Split(reply, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k != "" {
			c[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if len(c) == 0 {
		return c, fmt.Errorf("fourlw: %s: no key=value lines in %q", cmd, abbreviate(reply))
	}
	return c, nil
}

// Servers returns the server.N lines of a replicated server's conf, by id
// ("1" -> "127.0.0.1:2888:3888:participant").
func (c Conf) Servers() map[string]string {
	s := map[string]string{}
	for k, v := range c {
		if id, ok := strings.CutPrefix(k, "server."); ok {
			s[id] = v
		}
	}
	return s
}
