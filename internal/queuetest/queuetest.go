// Package queuetest fills a queue for tests of what reads one whole.
package queuetest

import (
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkherd/zkherd/recipes"
)

// AddItems creates n queue items under dir, in multis of 1,000 creates
// (each request about 100 KB, well under the server's 1 MiB
// jute.maxbuffer), named as Put names them but with sequence numbers from
// 9,000,000,000 so that they sort after every item a run puts. Their
// data, "added", is no run's item.
func AddItems(conn *zk.Conn, dir string, n int) error {
	acl := zk.WorldACL(zk.PermAll)
	for start := 0; start < n; start += 1000 {
		ops := make([]any, 0, 1000)
		for i := start; i < min(n, start+1000); i++ {
			name := fmt.Sprintf("%s%s-%s%010d", recipes.ProtectedPrefix, uuid.NewString(), recipes.PrefixQueueItem, 9_000_000_000+i)
			ops = append(ops, &zk.CreateRequest{Path: dir + "/" + name, Data: []byte("added"), Acl: acl})
		}
		if _, err := conn.Multi(ops...); err != nil {
			return fmt.Errorf("add items %d..%d to %s: %w", start, start+len(ops)-1, dir, err)
		}
	}
	return nil
}
