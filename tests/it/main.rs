//! The integration tests: one binary, one module per capability (as ripgrep's `tests/tests.rs`
//! and just's `tests/lib.rs`), so the product and the GitHub emulator are linked once, not once
//! per file, and a helper is compiled once. `harness` is the CLI tests' world (the emulator over
//! real HTTP, identities, the real binary per host), `support` the conformance and fidelity
//! helpers (OpenAPI and GraphQL checkers, recorded exchanges, real git origins, keys). Run one
//! capability with `cargo test --test it MODULE::` (docs/development.md).
//!
//! No test here needs a process of its own: each keeps its processes, folders and emulator to
//! itself, so they share the binary's threads like any other tests.

mod harness;
mod support;

// Shared with the benchmarks (`benches/`) and the fuzz targets (`fuzz/`), which include them too.
#[path = "../../benches/support/fleet.rs"]
mod fleet;
#[path = "../../fuzz/props.rs"]
mod props;

// The GitHub emulator itself and the client that talks to it.
mod conformance;
mod fidelity;
mod github_client;
mod sim_basics;
mod sim_origin;
mod unreachable;

// Claims and Runs.
mod claim_race;
mod credentials;
mod factories;
mod refused_ends;
mod run_lifecycle;
mod secrets;

// Recovery: liveness, reconcile, the companion, keeping a dead Run's work.
mod cache_differential;
mod causes;
mod chaos;
mod companion;
mod continuation;
mod hostile_records;
mod identities;
mod keep_work;
mod liveness;
mod peoples_labels;
mod recovery;
mod recovery_races;
mod salvage;
mod stale_reads;

// Steering: commands, cancel, pickup.
mod agent_script;
mod cancel;
mod commands;
mod failure_limits;
mod pickup;

// thirdshift's own Runs.
mod thirdshift;
mod thirdshift_carry_on;
mod thirdshift_collision;
mod thirdshift_companion;
mod thirdshift_real;
mod thirdshift_worktrees;

// The code's own layers.
mod architecture;

// What users meet: the CLI, the view, the Action, the README, authentication.
mod action;
mod app_auth;
mod cli;
mod readme;
mod release;
mod view;
mod workflows;

// The fuzz targets' properties on stable.
mod fuzz_properties;
