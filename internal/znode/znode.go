// Package znode holds the small ZooKeeper helpers several packages share
// (as etcd's concurrency package keeps its own in key.go), so that each
// is written once.
package znode

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-zookeeper/zk"
)

// CreatePath creates p and its missing ancestors, empty and persistent,
// with acl, from the root down; a node that exists already is fine (another
// client may be creating the same path).
func CreatePath(conn *zk.Conn, p string, acl []zk.ACL) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		if part == "" {
			continue
		}
		cur += "/" + part
		if _, err := conn.Create(cur, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", cur, err)
		}
	}
	return nil
}

// CreateParents creates the missing ancestors of p (not p itself), as
// CreatePath does.
func CreateParents(conn *zk.Conn, p string, acl []zk.ACL) error {
	return CreatePath(conn, path.Dir(p), acl)
}
