//! thirdshift's own Runs on this machine, adopted with no wrapper: thirdshift (crates.io, 0.19.0)
//! claims an issue with the `in-progress` label alone and keeps a local Command record per Run;
//! this module reads those records on this host (`scan.rs`, `here.rs`), parsed by the pure reader
//! in `protocol::thirdshift`, as a claim record our liveness rules judge (`claim.rs`), finds a
//! Command's worktree and writers (`worktree.rs`, `writers.rs`) and judges a Pickup's reservation
//! (`reservation.rs`). Its door is this file: the submodules are private. docs/thirdshift.md holds the facts it relies
//! on, with the lines of thirdshift's source they come from.
//!
//! It does not judge liveness, write reports or end anything: `observe` and `reconcile` do, on
//! the same evidence as for our own Claims. It never writes thirdshift's files.

mod claim;
mod here;
mod reservation;
mod scan;
mod worktree;
mod writers;

#[cfg(test)]
mod testing;

pub use crate::protocol::thirdshift::{claim_id, Command, Found};
pub use claim::as_claim;
pub use here::{on_this_host, Adopted};
pub use reservation::{
    judge as judge_reservation, parse as parse_reservation, reference as reservation_ref, DeadOwner,
};
pub use scan::{commands, default_logs_dir, Scanned};
pub use worktree::{of_command, Named};
pub use writers::writers;
