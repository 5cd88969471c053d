//! This machine: who it is (host name, machine id, boot id), its processes (identity that
//! survives PID reuse, session membership, signals) and the local folder of Claims it took.
//! `table.rs` snapshots the process table, `liveness.rs` judges a Claim from it, `capacity.rs`
//! says how many Runs this host may carry and how many it carries now, `stop.rs` stops a
//! cancelled Run (TERM, grace, KILL), `salvage.rs` keeps a stopped Run's work (commit and push,
//! never reset or force) and `private.rs` makes the state folder's files the user's only, `turn.rs` makes two processes of one
//! host take turns at a job, `login.rs` keeps who the credentials belong to, `branch.rs` reads which branch a worktree is on. Nothing here talks to GitHub.

pub mod adopt;
pub mod branch;
pub mod capacity;
pub mod identity;
pub mod liveness;
pub mod login;
pub mod private;
pub mod process;
pub mod salvage;
pub mod state;
pub mod stop;
pub mod table;
pub mod turn;
pub mod verdicts;

pub use identity::HostIdentity;
pub use liveness::judge;
pub use process::ProcessIdentity;
pub use state::{LocalClaim, LocalStatus, StateDir};
pub use table::{ProcessEntry, ProcessTable};
