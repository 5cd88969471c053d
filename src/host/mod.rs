//! This machine: who it is (host name, machine id, boot id), its processes (identity that
//! survives PID reuse, session membership, signals) and the local folder of Claims it took.
//! Liveness verdicts and salvage come with crash recovery; nothing here talks to GitHub.

pub mod identity;
pub mod process;
pub mod state;

pub use identity::HostIdentity;
pub use process::ProcessIdentity;
pub use state::{LocalClaim, LocalStatus, StateDir};
