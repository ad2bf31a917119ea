package inspect

import "context"

// poller polls every member once.
type poller interface {
	Poll(ctx context.Context) []memberPoll
}
