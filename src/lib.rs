//! thirdshift-reconciler: agent Runs on GitHub issues that take Claims through comment records,
//! end them on evidence, and stay visible across machines.
//!
//! The library holds every piece so that tests can drive them in-process; `main.rs` only parses
//! arguments and maps errors to exit codes. It does not hold any decision that depends on a clock.
//!
//! The top-level modules are the design's layers, listed here from the bottom up. A module uses
//! only modules listed before it (tests/it/architecture.rs fails on any import that climbs, and
//! on any cycle); docs/architecture.md draws them.

// 1. Pure, no IO and no clock: exit codes; the protocol (records, config, rules, grammar);
// the bot's text, rendered from records.
pub mod exit;

pub mod protocol;

pub mod text;

// 2. IO: GitHub's API, then this machine, its git (a Run's branch, its work salvaged) and
// thirdshift's own Runs on it, then one command's view of both.
pub mod github;

pub mod host;

pub mod salvage;

pub mod thirdshift;

pub mod context;

// 3. IO on our records in GitHub (posting, settling, de-duplicating), then the world read
// from them.
pub mod store;

pub mod snapshot;

// 4. What to do about it, decided (pure) and applied; a Claim ended the way its Run ended, on
// its own host.
pub mod reconcile;

pub mod ending;

// 5. The use cases: the live view, `/thirdshift` commands, this host's observe, a Run's life,
// pickup.
pub mod view;

pub mod commands;

pub mod observe;

pub mod run;

pub mod pickup;

// 6. The command line on top.
pub mod cli;
