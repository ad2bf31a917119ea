package recipes_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkherd/zkherd/recipes"
)

func ExampleSemaphore() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, recipes.SharedTestServers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// Two leases; every contender must say 2.
	sem := recipes.NewSemaphore(s, "/examples/semaphore", 2)
	var held []*recipes.Lease
	for range 2 {
		lease, err := sem.Acquire(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		held = append(held, lease)
	}
	_, err = sem.TryAcquire(ctx)
	fmt.Println("third lease:", err)

	held[0].Release(ctx)
	lease, err := sem.TryAcquire(ctx)
	fmt.Println("after a release:", err)
	lease.Release(ctx)
	held[1].Release(ctx)

	_, err = recipes.NewSemaphore(s, "/examples/semaphore", 3).Acquire(ctx)
	fmt.Println(errors.Is(err, recipes.ErrLeasesMismatch))
	// Output:
	// third lease: recipes: held by another owner
	// after a release: <nil>
	// true
}
