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
