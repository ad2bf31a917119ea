package recipes_test

import (
	"context"
	"fmt"

	"github.com/zkherd/zkherd/recipes"
)

func ExampleQueue() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, recipes.SharedTestServers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	q := recipes.NewQueue(s, "/examples/queue")
	for _, job := range []string{"resize", "upload", "notify"} {
		if _, err := q.Put(ctx, []byte(job)); err != nil {
			fmt.Println(err)
			return
		}
	}

	// Take: each item goes to exactly one consumer, first in, first out.
	data, err := q.Take(ctx)
	fmt.Printf("took %s (%v)\n", data, err)

	// Claim: the item stays queued until Ack, so a consumer that dies
	// mid-item loses nothing.
	for {
		claim, err := q.Claim(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("processing %s\n", claim.Data)
		if err := claim.Ack(ctx); err != nil {
			fmt.Println(err)
			return
		}
		if n, _ := q.Len(ctx); n == 0 {
			break
		}
	}
	// Output:
	// took resize (<nil>)
	// processing upload
	// processing notify
}
