//! thirdshift's own Runs, adopted with no wrapper: thirdshift (crates.io, 0.19.0) claims an issue
//! with the `in-progress` label alone and keeps a local Command record per Run; this module reads
//! those records on this host (`scan.rs`) and turns each unfinished one into what the rest of the
//! tool needs to judge and show it (`record.rs`), as a claim record our liveness rules judge
//! (`claim.rs`). docs/thirdshift.md holds the facts it relies
//! on, with the lines of thirdshift's source they come from.
//!
//! It does not judge liveness, write reports or end anything: `observe` and `reconcile` do, on
//! the same evidence as for our own Claims. It never writes thirdshift's files.

pub mod claim;
pub mod here;
pub mod record;
pub mod reservation;
pub mod scan;
pub mod worktree;
pub mod writers;

#[cfg(test)]
mod testing;

pub use claim::as_claim;
pub use here::{on_this_host, Adopted};
pub use record::{claim_id, Command, Found};
pub use scan::{commands, default_logs_dir, Scanned};
pub use writers::writers;
