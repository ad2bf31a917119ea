package recipes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// errWatchDropped means go-zookeeper stopped watching (session closed or
// expired) before the event came.
var errWatchDropped = errors.New("recipes: watch dropped")

// waitEvent turns a go-zookeeper watch channel into ctx-aware waiting: it
// returns the event when the watch fires, or an error when the watch is
// dropped, the session ends, or ctx ends. Every recipe waits through it.
func waitEvent(ctx context.Context, s *Session, ch <-chan zk.Event) (zk.Event, error) {
	select {
	case ev, ok := <-ch:
		switch {
		case !ok || ev.Type == zk.EventNotWatching:
			if err := s.alive(); err != nil {
				return ev, err
			}
			return ev, fmt.Errorf("%w on %s", errWatchDropped, ev.Path)
		case ev.Err != nil:
			return ev, fmt.Errorf("recipes: watch on %s: %w", ev.Path, ev.Err)
		}
		return ev, nil
	case <-s.Done():
		return zk.Event{}, s.Err()
	case <-ctx.Done():
		return zk.Event{}, ctx.Err()
	}
}
