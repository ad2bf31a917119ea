package recipes_test

import (
	"context"
	"fmt"

	"github.com/zkherd/zkherd/recipes"
)

func ExampleRWLock() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, recipes.SharedTestServers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// Three owners of one lock (usually three processes).
	const path = "/examples/rwlock"
	alice, bob, carol := recipes.NewRWLock(s, path), recipes.NewRWLock(s, path), recipes.NewRWLock(s, path)

	if err := alice.ReadLock().Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// Readers share...
	fmt.Println("bob reads:", bob.ReadLock().TryLock(ctx))
	// ...and keep writers out.
	fmt.Println("carol writes:", carol.WriteLock().TryLock(ctx))

	alice.ReadLock().Unlock(ctx)
	bob.ReadLock().Unlock(ctx)
	fmt.Println("carol writes:", carol.WriteLock().TryLock(ctx))
	fmt.Println("alice reads:", alice.ReadLock().TryLock(ctx))
	carol.WriteLock().Unlock(ctx)
	// Output:
	// bob reads: <nil>
	// carol writes: recipes: held by another owner
	// carol writes: <nil>
	// alice reads: recipes: held by another owner
}
