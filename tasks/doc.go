// Package tasks turns a repository's own tests into execution-verified
// coding tasks, the way the SWE-Flow paper (arXiv 2506.09003) proposes, but
// without the defects of its public code (see docs/tasks.md).
//
// The stage runs in four verbs:
//
//   - Trace: run every test alone, three times, and record which functions it
//     exercises (the runtime dependency graph). Go modules use per-test block
//     coverage from one instrumented test binary per package, with a baseline
//     run subtracted, and a static call graph (VTA seeded by CHA) whose edges
//     are kept only when caller, callee and call-site block are covered by the
//     test. Python projects use pytest with a tracer plugin embedded in this
//     package. Flaky and order-dependent tests are dropped and listed.
//   - Plan: group tests by the core functions they cover and order the groups
//     by dependency and size; a group that brings nothing new is merged into
//     the step it depends on.
//   - Build: per step, cumulatively, a skeleton (step N..end stubbed, never
//     deleted), the reference patch, the fail-to-pass and pass-to-pass lists
//     and a requirement document.
//   - Audit: the three-state check (skeleton, reference, original); only
//     steps that pass are exported.
//
// Stubbed Go bodies become panic("TODO: implement X"); stubbed Python bodies
// raise NotImplementedError. Functions that run at import or init time are
// never stubbed: they are scaffolding, not tasks (their stub would break
// every test of the package rather than the step's own).
package tasks
