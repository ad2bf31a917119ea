package recipes_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/zkherd/zkherd/recipes"
)

func ExampleBarrier() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, recipes.SharedTestServers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// Three workers (usually three processes) start together.
	const workers = 3
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = recipes.NewBarrier(s, "/examples/barrier", workers).Wait(ctx)
		}()
	}
	wg.Wait()
	fmt.Println("all through:", errs)
	// Output:
	// all through: [<nil> <nil> <nil>]
}

func ExampleDoubleBarrier() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, recipes.SharedTestServers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	const workers = 3
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
		errs = make([]error, workers)
	)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := recipes.NewDoubleBarrier(s, "/examples/double-barrier", workers)
			if errs[i] = b.Enter(ctx); errs[i] != nil {
				return
			}
			mu.Lock()
			done++ // the work: all three are in here together
			mu.Unlock()
			errs[i] = b.Leave(ctx) // returns once all three have finished
		}()
	}
	wg.Wait()
	fmt.Println(done, "done:", errs)
	// Output:
	// 3 done: [<nil> <nil> <nil>]
}
