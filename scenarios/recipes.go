package scenarios

import (
	"slices"

	"github.com/zkherd/zkherd/figures"
)

// Recipe names the coordination recipe a scenario drives.
type Recipe string

// The recipes a scenario can drive.
const (
	FairLock     Recipe = "fair-lock"     // sequential nodes, each waiter watches its predecessor
	HerdLock     Recipe = "herd-lock"     // one node, every waiter watches it
	HerdChildren Recipe = "herd-children" // sequential nodes, every waiter watches the directory's children
	RWLock       Recipe = "rwlock"        // read/write lock: a mix of readers and writers
	Semaphore    Recipe = "semaphore"     // N leases
	Queue        Recipe = "queue"         // producers and consumers
	Election     Recipe = "election"      // leader election with resignations
	Barrier      Recipe = "barrier"       // double barrier: enter when Size arrived, leave together
)

// RecipeSpec is what every layer above the load generator knows of a
// recipe it loads, written once: the checks (loadgen's checkList), the
// figures, the sweep's model and the dashboard read it from here. How its clients run
// is its workload in loadgen (one file there, registered in loadgen's
// workloads table).
type RecipeSpec struct {
	Recipe Recipe
	// Title names it on the dashboard's panel.
	Title string
	// Base names its shared directories under the run's namespace
	// (base-000, base-001, ...).
	Base string
	// Exclusive: one holder at a time (writers, for the rwlock): the
	// mutual-exclusion check applies.
	Exclusive bool
	// FIFO: grants follow the order of arrival: the FIFO check applies.
	FIFO bool
	// Fenced: a holder learns it lost what it held (Lost), and fencing
	// tokens are checked against its writes.
	Fenced bool
	// HandsOut: it grants something that is later released: the herd
	// figures apply, and its unit of work is an acquisition.
	HandsOut bool
	// Limited is the check of a recipe that grants at most a number of
	// holders at once (the semaphore's leases, the election's one leader)
	// instead of mutual exclusion; "" when none.
	Limited string
	// GrowsWithWaiters: its cost per operation grows with the clients
	// waiting (a sweep fits a line; a constant otherwise).
	GrowsWithWaiters bool
	// Items: it hands items from producers to consumers: the queue's
	// depth is shown and its at-most-once checks are made at the end.
	Items bool
	// Holderless: its clients neither hold nor wait for a grant (a
	// barrier): faults that act on a holder or a waiter do not apply.
	Holderless bool
	// SpansProcesses: one process's operations alone are no history of
	// it (items and rounds span the processes of a distributed run): the
	// process that merges the run checks them.
	SpansProcesses bool
}

// recipeSpecs is the one list of recipes, in the order documentation
// shows them.
var recipeSpecs = []RecipeSpec{
	{Recipe: FairLock, Title: "fair lock", Base: "lock", Exclusive: true, FIFO: true, Fenced: true, HandsOut: true},
	{Recipe: HerdLock, Title: "herd lock", Base: "lock", Exclusive: true, Fenced: true, HandsOut: true, GrowsWithWaiters: true},
	{Recipe: HerdChildren, Title: "herd lock (children watch)", Base: "lock", Exclusive: true, Fenced: true, HandsOut: true, GrowsWithWaiters: true},
	{Recipe: RWLock, Title: "read/write lock", Base: "rwlock", Exclusive: true, HandsOut: true},
	{Recipe: Semaphore, Title: "semaphore", Base: "semaphore", HandsOut: true, Limited: "semaphore_over_issued"},
	{Recipe: Queue, Title: "queue", Base: "queue", Items: true, SpansProcesses: true},
	{Recipe: Election, Title: "election", Base: "election", Fenced: true, HandsOut: true, Limited: "double_leader"},
	{Recipe: Barrier, Title: "barrier", Base: "barrier", Holderless: true, SpansProcesses: true},
}

// Recipes lists every recipe in the order documentation shows them.
func Recipes() []Recipe {
	out := make([]Recipe, len(recipeSpecs))
	for i, s := range recipeSpecs {
		out[i] = s.Recipe
	}
	return out
}

// Spec returns r's entry; an unknown recipe has an empty one titled by
// its name.
func (r Recipe) Spec() RecipeSpec {
	if i := slices.IndexFunc(recipeSpecs, func(s RecipeSpec) bool { return s.Recipe == r }); i >= 0 {
		return recipeSpecs[i]
	}
	return RecipeSpec{Recipe: r, Title: string(r), Base: string(r)}
}

// Valid reports whether r is one of Recipes.
func (r Recipe) Valid() bool { return slices.Contains(Recipes(), r) }

// IsLock reports whether r is a mutual-exclusion lock (one holder at a
// time, fenced).
func (r Recipe) IsLock() bool { s := r.Spec(); return s.Exclusive && s.Fenced }

// Figures is what the figures table needs of r (figures.For).
func (r Recipe) Figures() figures.Recipe {
	return figures.Recipe{Name: string(r), HandsOut: r.Spec().HandsOut}
}
