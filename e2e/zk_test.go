package e2e

import (
	"context"
	"io"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
)

// benchConnect connects to servers with a quiet logger and a buf-byte
// buffer (large reads: a 1 MB node, 50,000 children), returning once the
// session is established or ctx ends.
func benchConnect(ctx context.Context, servers []string, buf int) (*zk.Conn, error) {
	c, events, err := zk.Connect(servers, 30*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithMaxBufferSize(buf))
	if err != nil {
		return nil, err
	}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return c, nil
			}
		case <-ctx.Done():
			c.Close()
			return nil, ctx.Err()
		}
	}
}
