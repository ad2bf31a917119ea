// Package scenarios says what a load run is: which recipe, how many
// clients, how they arrive, how long they hold, for how long, and which
// faults to inject. It is pure logic: nothing here talks to ZooKeeper.
//
// A scenario is a [Spec]. Built-in scenarios ship with the binary as YAML
// files (see [Builtins]); users write their own in the same format and load
// them with [Load] or [Lookup]. Every mistake in a file is reported with its
// file, line and column, the field, what is wrong and what is allowed, and
// all mistakes are reported at once (see [ErrorList]).
//
// The YAML format, every field optional but recipe (durations in Go
// syntax: 500ms, 10s, 1m30s):
//
//	name: my-test              # defaults to the file name
//	description: what it shows
//	recipe: fair-lock          # herd-lock, herd-children, rwlock, semaphore, queue, election, barrier
//	clients: 50                # sessions
//	locks: 1                   # lock paths (queues, elections) the clients are spread over
//	duration: 10s              # or ops: 5000 (not both)
//	arrival: closed            # or {kind: stampede|closed, think_time: 5ms} or {kind: constant|poisson, rate: 200}
//	ramp_up: 200               # sessions opened per second
//	hold: 1ms                  # or {kind: uniform, min: 1ms, max: 5ms} or {kind: exponential, mean: 2ms, max: 20ms}
//	session_timeout: 10s
//	ensemble: 1                # members of the local ensemble: 1 or 3
//	seed: 1
//	rwlock: {read_ratio: 0.9}  # the block of the recipe's parameters, if any:
//	semaphore: {leases: 4}     #   only the one matching recipe is allowed
//	queue: {producers: 5, consumers: 5, items: 1000}
//	barrier: {size: 10}
//	faults:
//	  - {at: 5s, kind: kill-leader, duration: 3s}
//	  - {every: 2s, kind: expire-random, rate: 5, duration: 1s}
//	  - {at: 8s, kind: delay-connections, member: 2, delay: 50ms, duration: 2s}
//	  - {every: 500ms, kind: cut-connections, on: create}  # cut right after a create reaches the server
//	ignore_lost: false         # true: holders ignore Lost() (shows fencing catching the overlap)
//	compare:                   # instead of recipe: runs one after the other
//	  - {name: herd, recipe: herd-lock}
//	  - {name: fair, recipe: fair-lock}
//
// Zero values in a Spec mean "the default": each field's comment says which
// default, and the defaults are exported as Default* constants. Nothing
// writes defaults back into a caller's Spec; [Spec.Effective] returns a copy
// with every default applied, and [Spec.Runs] expands a scenario into the
// runs it stands for.
//
// The pacers ([ConstantPacer], [PoissonPacer], [ClosedPacer], [Ramp]) turn an arrival shape
// into pure functions of elapsed time and operations done, and a [Sampler]
// draws hold times from a seeded source, so that both are table-tested
// without a clock.
package scenarios
