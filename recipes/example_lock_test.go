package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path"

	"github.com/zkherd/zkherd/recipes"
)

// In a program the servers come from configuration, e.g.
// []string{"127.0.0.1:2181"}; the examples use the test suite's server.
func exampleServers() []string { return recipes.SharedTestServers() }

func ExampleLock() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, exampleServers())
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	l := recipes.NewLock(s, "/example/locks/report")
	if err := l.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	// The node is named as Apache Curator's InterProcessMutex names its own.
	n, _ := recipes.ParseNode(path.Base(l.Node()))
	fmt.Println("held:", n.Layout, n.Kind)

	// Stop working when ownership can no longer be trusted, and pass the
	// fencing token to whatever the lock protects.
	select {
	case <-l.Lost():
		fmt.Println("lost:", l.Err())
	default:
		fmt.Println("fencing token issued:", l.FencingToken() > 0)
	}

	if err := l.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("released:", l.Node() == "")
	// Output:
	// held: curator lock
	// fencing token issued: true
	// released: true
}

func ExampleLock_TryLock() {
	ctx := context.Background()
	alice, err := recipes.NewSession(ctx, exampleServers())
	if err != nil {
		log.Fatal(err)
	}
	defer alice.Close()
	bob, err := recipes.NewSession(ctx, exampleServers())
	if err != nil {
		log.Fatal(err)
	}
	defer bob.Close()

	a := recipes.NewLock(alice, "/example/locks/trylock")
	b := recipes.NewLock(bob, "/example/locks/trylock")
	if err := a.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	err = b.TryLock(ctx)
	fmt.Println("bob while alice holds:", errors.Is(err, recipes.ErrHeldByOther))
	if err := a.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("bob after alice released:", b.TryLock(ctx))
	if err := b.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// bob while alice holds: true
	// bob after alice released: <nil>
}

func ExampleHerdLock() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, exampleServers())
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// The naive lock, for comparison only: every waiter watches the one
	// node, so each release wakes them all.
	l := recipes.NewHerdLock(s, "/example/locks/herd")
	if err := l.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("held:", path.Base(l.Node()))
	if err := l.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// held: herd-lock
}

func ExampleLocker() {
	ctx := context.Background()
	s, err := recipes.NewSession(ctx, exampleServers())
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// The three locks share one interface, so a load generator can drive
	// any of them.
	for _, l := range []recipes.Locker{
		recipes.NewLock(s, "/example/lockers/fair"),
		recipes.NewHerdLock(s, "/example/lockers/herd"),
		recipes.NewHerdChildrenLock(s, "/example/lockers/children"),
	} {
		if err := l.Lock(ctx); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%T holds %s\n", l, path.Dir(l.Node()))
		if err := l.Unlock(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// *recipes.Lock holds /example/lockers/fair
	// *recipes.HerdLock holds /example/lockers/herd
	// *recipes.HerdChildrenLock holds /example/lockers/children
}

func ExampleParseChildren() {
	nodes, unknown := recipes.ParseChildren([]string{
		"_c_0c1d6c2e-3f1b-4a7e-9d2c-5b8e7f6a1d20-lock-0000000007", // Curator or zkherd
		"_c_5f0c3a9e8d7b6a5f4e3d2c1b0a998877-lock-0000000005",     // go-zookeeper
		"5f0c3a9e8d7b6a5f4e3d2c1b0a998877__lock__0000000006",      // kazoo
		"x-72057594037927936-0000000004",                          // ZooKeeper's recipe
		"config",
	})
	for i, n := range nodes {
		fmt.Printf("%d %-12s seq %d, waits on %d\n", i, n.Layout, n.Seq, recipes.MutexPredecessor(nodes, i))
	}
	fmt.Println("unrecognised:", unknown)
	// Output:
	// 0 zookeeper    seq 4, waits on -1
	// 1 go-zookeeper seq 5, waits on 0
	// 2 kazoo        seq 6, waits on 1
	// 3 curator      seq 7, waits on 2
	// unrecognised: [config]
}
