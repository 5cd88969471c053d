//! thirdshift-reconciler: agent Runs on GitHub issues that take Claims through comment records,
//! end them on evidence, and stay visible across machines.
//!
//! The library holds every piece so that tests can drive them in-process; `main.rs` only parses
//! arguments and maps errors to exit codes. It does not hold any decision that depends on a clock.

pub mod adopt;
pub mod app;
pub mod broker;
pub mod cancel;
pub mod claim;
pub mod cli;
pub mod commands;
pub mod companion;
pub mod config;
pub mod context;
#[cfg(feature = "emulator")]
pub mod demo;
pub mod detached;
pub mod exit;
pub mod fingerprint;
pub mod fresh;
pub mod github;
pub mod host;
pub mod keep;
pub mod manual;
pub mod observe;
pub mod pickup;
pub mod policy;
pub mod progress;
pub mod reconcile;
pub mod record;
pub mod registry;
pub mod release;
pub mod reservation;
pub mod resume;
pub mod run;
pub mod snapshot;
pub mod stage;
pub mod stop_adopted;
pub mod summary;
pub mod text;
pub mod view;
pub mod workflow;
