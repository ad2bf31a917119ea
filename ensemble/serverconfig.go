package ensemble

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkherd/zkherd/internal/pkgerr"
)

// ServerConfig holds the server settings that change what clients may rely
// on. The zero value is ZooKeeper's default configuration. Recipes are
// tested against each of enstest.ServerConfigs: a library that relies on ACLs, on
// the digest algorithm or on its directories outliving a minute must be
// caught by one of them.
type ServerConfig struct {
	// SkipACL starts the servers with zookeeper.skipACL=yes: they check no
	// ACL, so any client may write or delete any node, whatever its ACL
	// says (as a super user may on any server).
	SkipACL bool
	// DigestAlgorithm sets zookeeper.DigestAuthenticationProvider.digestAlg
	// (ZooKeeper 3.7+), e.g. "SHA-256". Clients compute digest ACLs with
	// SHA-1, so on such a server no digest ACL a client made ever matches an
	// identity: the node becomes writable by nobody but a super user.
	// "" keeps the server's default (SHA1).
	DigestAlgorithm string
	// ContainerCheckInterval is how often the server reaps empty container
	// nodes (znode.container.checkIntervalMs; the server's default is one
	// minute). When set, the reaping rate limit (znode.container.
	// maxPerMinute) is lifted too, so that a test sees a container that
	// emptied gone within about one interval. 0 keeps the defaults.
	ContainerCheckInterval time.Duration
	// MaxSessionTimeout is the longest session timeout the servers grant
	// (zoo.cfg maxSessionTimeout; the local ensemble's default is 60 s).
	// Below a client's asked timeout, the client is granted this: a holder
	// must count its leases on the negotiated value, not the asked one.
	// It is rounded to whole milliseconds, and 0 keeps the default.
	MaxSessionTimeout time.Duration
	// SyncLimit is how long a follower and its leader wait for each other
	// before giving up (zoo.cfg syncLimit, in ticks of 500 ms, rounded up;
	// the local ensemble's default is 5 s, which detects a stopped member
	// quickly). On a machine whose CPUs other work keeps busy, a member's
	// quorum link can stall longer than that: the ensemble then loses its
	// leader and closes every client's connection. 0 keeps the default.
	SyncLimit time.Duration
}

// String names the configuration's departures from the default, "default"
// for none: "skipACL", "digestAlg=SHA-256", "containerCheck=1s", joined by
// "+".
func (c ServerConfig) String() string {
	var parts []string
	if c.SkipACL {
		parts = append(parts, "skipACL")
	}
	if c.DigestAlgorithm != "" {
		parts = append(parts, "digestAlg="+c.DigestAlgorithm)
	}
	if c.ContainerCheckInterval > 0 {
		parts = append(parts, "containerCheck="+c.ContainerCheckInterval.String())
	}
	if c.MaxSessionTimeout > 0 {
		parts = append(parts, "maxSessionTimeout="+c.MaxSessionTimeout.String())
	}
	if c.SyncLimit > 0 {
		parts = append(parts, "syncLimit="+c.SyncLimit.String())
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, "+")
}

// maxSessionMs is the zoo.cfg maxSessionTimeout c asks for.
func (c ServerConfig) maxSessionMs() int64 {
	if c.MaxSessionTimeout <= 0 {
		return maxSessionTimeout
	}
	return max(minSessionTimeout, c.MaxSessionTimeout.Milliseconds())
}

// syncLimitTicks is the zoo.cfg syncLimit c asks for.
func (c ServerConfig) syncLimitTicks() int64 {
	if c.SyncLimit <= 0 {
		return syncLimitTicks
	}
	return (c.SyncLimit.Milliseconds() + tickTimeMs - 1) / tickTimeMs
}

// properties are the JVM system properties (-Dkey=value) that apply c. All
// are read once at start-up, so they apply to every start and Restart.
func (c ServerConfig) properties() []string {
	var props []string
	if c.SkipACL {
		props = append(props, "-Dzookeeper.skipACL=yes")
	}
	if c.DigestAlgorithm != "" {
		props = append(props, "-Dzookeeper.DigestAuthenticationProvider.digestAlg="+c.DigestAlgorithm)
	}
	if c.ContainerCheckInterval > 0 {
		ms := max(1, c.ContainerCheckInterval.Milliseconds())
		props = append(props,
			"-Dznode.container.checkIntervalMs="+strconv.FormatInt(ms, 10),
			"-Dznode.container.maxPerMinute=1000000")
	}
	return props
}

// ServerConfigHelp describes the form ParseServerConfig reads.
const ServerConfigHelp = "configuration of the local ensemble's servers, comma-separated: skip-acl (no ACL enforced), " +
	"digest=ALG (such as digest=SHA-256), container-check=DURATION (reap empty containers that often, such as container-check=1s), " +
	"max-session-timeout=DURATION (the longest session the servers grant, such as max-session-timeout=2s), " +
	"sync-limit=DURATION (how long members wait for each other before giving up, default 5s; longer on a busy machine, such as sync-limit=30s); default: ZooKeeper's"

// ParseServerConfig reads a configuration as a user writes it
// (ServerConfigHelp): "skip-acl,digest=SHA-256,container-check=1s,
// max-session-timeout=2s"; "" and
// "default" are ZooKeeper's default configuration. Errors name the part
// that is wrong, and are marked as ensemble's (package pkgerr).
func ParseServerConfig(s string) (ServerConfig, error) {
	var c ServerConfig
	if s == "" || s == "default" {
		return c, nil
	}
	for _, part := range strings.Split(s, ",") {
		key, val, hasVal := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case key == "skip-acl" && !hasVal:
			c.SkipACL = true
		case key == "digest" && val != "":
			c.DigestAlgorithm = val
		case key == "container-check" && hasVal:
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return c, pkgerr.Wrap("ensemble", fmt.Errorf("%s: %q is not a duration such as 1s", part, val))
			}
			c.ContainerCheckInterval = d
		case key == "max-session-timeout" && hasVal:
			d, err := time.ParseDuration(val)
			if err != nil || d < time.Duration(minSessionTimeout)*time.Millisecond {
				return c, pkgerr.Wrap("ensemble", fmt.Errorf("%s: %q is not a duration of at least %v such as 2s", part, val, time.Duration(minSessionTimeout)*time.Millisecond))
			}
			c.MaxSessionTimeout = d
		case key == "sync-limit" && hasVal:
			d, err := time.ParseDuration(val)
			if err != nil || d < time.Second {
				return c, pkgerr.Wrap("ensemble", fmt.Errorf("%s: %q is not a duration of at least 1s such as 30s", part, val))
			}
			c.SyncLimit = d
		default:
			return c, pkgerr.Wrap("ensemble", fmt.Errorf("%q: use skip-acl, digest=ALG (such as digest=SHA-256), container-check=DURATION (such as container-check=1s) max-session-timeout=DURATION (such as max-session-timeout=2s) or sync-limit=DURATION (such as sync-limit=30s), comma-separated", part))
		}
	}
	return c, nil
}
