package recipes_test

import (
	"context"
	"fmt"

	"github.com/zkherd/zkherd/recipes"
)

func ExampleElection() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := recipes.NewSession(ctx, recipes.SharedTestServers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	const path = "/examples/election"
	// Anyone can watch who leads.
	changes := recipes.NewElection(s, path).Observe(ctx)
	nextLeader := func() {
		for l := range changes {
			if l.Node != "" {
				fmt.Printf("leader: %s\n", l.Value)
				return
			}
		}
	}

	a, b := recipes.NewElection(s, path), recipes.NewElection(s, path)
	if err := a.Campaign(ctx, []byte("a")); err != nil {
		fmt.Println(err)
		return
	}
	nextLeader()

	bLeads := make(chan error, 1)
	go func() { bLeads <- b.Campaign(ctx, []byte("b")) }()
	a.Resign(ctx)
	nextLeader()
	if err := <-bLeads; err != nil {
		fmt.Println(err)
		return
	}
	// b leads until it resigns or loses its session: watch b.Lost().
	b.Resign(ctx)
	// Output:
	// leader: a
	// leader: b
}
