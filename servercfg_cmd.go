package main

import (
	"strings"
	"time"

	"github.com/zkherd/zkherd/ensemble"
)

// serverConfigHelp describes --server-config.
const serverConfigHelp = "configuration of the local ensemble's servers, comma-separated: skip-acl (no ACL enforced), " +
	"digest=ALG (such as digest=SHA-256), container-check=DURATION (reap empty containers that often, such as container-check=1s); default: ZooKeeper's"

// parseServerConfig reads a --server-config value; "" and "default" are
// ZooKeeper's default configuration.
func parseServerConfig(s string) (ensemble.ServerConfig, error) {
	var c ensemble.ServerConfig
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
				return c, usageErr("--server-config %s: %q is not a duration such as 1s", part, val)
			}
			c.ContainerCheckInterval = d
		default:
			return c, usageErr("--server-config %q: use skip-acl, digest=ALG (such as digest=SHA-256) or container-check=DURATION (such as container-check=1s), comma-separated", part)
		}
	}
	return c, nil
}
